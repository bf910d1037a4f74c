// runtime/sanitizers.hpp
//
// Which sanitizer this translation unit is compiled under, the same way for g++ and clang:
// g++ defines __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__, clang 14 defines neither and
// answers __has_feature instead (the CI's ASan+UBSan and fuzz build uses clang-14).
//   KINFORMER_UNDER_ASAN  1 under -fsanitize=address, else 0
//   KINFORMER_UNDER_TSAN  1 under -fsanitize=thread, else 0
// Header-only, macros only; test with #if, not #ifdef.
#pragma once

#if defined(__has_feature)
#define KINFORMER_HAS_FEATURE(x) __has_feature(x)
#else
#define KINFORMER_HAS_FEATURE(x) 0
#endif

#if defined(__SANITIZE_ADDRESS__) || KINFORMER_HAS_FEATURE(address_sanitizer)
#define KINFORMER_UNDER_ASAN 1
#else
#define KINFORMER_UNDER_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__) || KINFORMER_HAS_FEATURE(thread_sanitizer)
#define KINFORMER_UNDER_TSAN 1
#else
#define KINFORMER_UNDER_TSAN 0
#endif
