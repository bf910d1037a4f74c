// tests/apiserver/tls_client.hpp
//
// HTTPS for the API server's security tests: a throwaway PKI made with the openssl
// command (a CA, a server certificate and client certificates it signed) and one
// blocking HTTPS GET over OpenSSL, optionally with a client certificate.
//
// Contract
//   * make_test_pki(dir) writes ca.{crt,key}, server.{crt,key} (CN and SAN localhost,
//     127.0.0.1), client.{crt,key} signed by ca, and rogue-ca.{crt,key} with
//     rogue-client.{crt,key} signed by it. False when openssl failed.
//   * https_get() returns the HTTP status, or 0 when the TLS handshake or the exchange
//     failed; https_exchange() returns the raw reply bytes (a refused client certificate, under TLS 1.3, fails at the first read). The
//     server's certificate is not verified: these tests are about the client's.
// Threading: one call per thread. Errors: status 0.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace kinformer::testing {

bool make_test_pki(const std::string& dir);

/// make_test_pki() in a fresh /tmp directory, removed by the destructor; `made` is false
/// when openssl failed.
struct TestPki {
  TestPki();
  ~TestPki();
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;
  std::string dir;
  bool made = false;
};

struct TlsClientIdentity {
  std::string certificate_file;  // "" = no client certificate
  std::string key_file;
};

int https_get(std::uint16_t port, const std::string& target, const TlsClientIdentity& identity = {},
              const std::string& authorization = "", std::chrono::milliseconds timeout = std::chrono::seconds(10));

/// Sends `request` as is over TLS and returns what came back until the server closed or
/// `timeout` passed ("" when the handshake failed). For framing tests (issue 33).
std::string https_exchange(std::uint16_t port, const std::string& request,
                           std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace kinformer::testing
