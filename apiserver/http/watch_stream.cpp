#include "apiserver/http/watch_stream.hpp"

#include <cstdio>
#include <utility>

#include "apiserver/watch_encoder.hpp"

namespace kinformer::apiserver {

namespace {

const std::string crlf = "\r\n";

}  // namespace

std::string chunk_header(std::size_t size) {
  char out[24];
  std::snprintf(out, sizeof out, "%zx\r\n", size);
  return out;
}

WatchStream::WatchStream(Storage& store, WatchPlan plan)
    : store_(store), plan_(std::move(plan)), position_(plan_.start_after) {
  pending_.push_back(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nCache-Control: no-cache, private\r\n"
      "Transfer-Encoding: chunked\r\n\r\n");
  if (plan_.final_error) {
    queue_chunk(*plan_.final_error);
    finish();
  }
}

void WatchStream::queue_chunk(std::string chunk) {
  if (plan_.rewrite_line) chunk = plan_.rewrite_line(chunk);
  if (chunk.empty()) return;
  pending_.push_back(chunk_header(chunk.size()) + chunk + crlf);
}

void WatchStream::queue_bookmark() { queue_chunk(bookmark_line(type(), position_, false)); }

void WatchStream::advance_to_progress() {
  const auto progress = store_.progress(type());
  std::vector<EventPtr> pending;
  if (progress > position_ && store_.events_after(type(), position_, 1, pending) && pending.empty())
    position_ = progress;
}

void WatchStream::finish() {
  ending_ = true;
  pending_.push_back("0\r\n\r\n");
}

WatchStream::Batch WatchStream::next_batch() {
  Batch batch;
  batch_strings_.clear();
  batch_events_.clear();
  batch_scratch_.clear();
  for (auto& p : pending_) batch_strings_.push_back(std::move(p));
  pending_.clear();
  for (auto& s : batch_strings_) batch.pieces.emplace_back(s);
  if (ending_) return batch;
  if (initial_next_ < plan_.initial_objects.size()) {
    collect_initial(batch);
    return batch;
  }
  if (!plan_.initial_lines.empty()) {  // the initial-events-end bookmark follows the initial objects
    std::string chunk;
    for (auto& line : plan_.initial_lines) chunk += line;
    batch.events += plan_.initial_lines.size();
    plan_.initial_lines.clear();
    batch_strings_.push_back(chunk_header(chunk.size()) + chunk + crlf);
    batch.pieces.emplace_back(batch_strings_.back());
  }
  collect_events(batch);
  return batch;
}

// The synthetic ADDEDs point into the shared stored objects: no per-watcher copy of the list.
void WatchStream::collect_initial(Batch& batch) {
  const std::string& prefix = line_prefix(LineType::added);
  const std::string& suffix = line_suffix();
  batch_strings_.emplace_back();
  auto header_slot = batch.pieces.size();
  batch.pieces.emplace_back();
  std::size_t bytes = 0;
  const auto& objects = plan_.initial_objects;
  for (; initial_next_ < objects.size() && bytes < max_batch_bytes; ++initial_next_) {
    const auto& json = objects[initial_next_]->json;
    batch.pieces.emplace_back(prefix);
    batch.pieces.emplace_back(json);
    batch.pieces.emplace_back(suffix);
    bytes += prefix.size() + json.size() + suffix.size();
    ++batch.events;
  }
  batch_strings_.back() = chunk_header(bytes);
  batch.pieces[header_slot] = batch_strings_.back();
  batch.pieces.emplace_back(crlf);
}

void WatchStream::collect_events(Batch& batch) {
  std::vector<EventPtr> events;
  if (!store_.events_after(type(), position_, max_events_per_batch, events)) {
    auto line = error_line(ApiError::expired("too old resource version: " + std::to_string(position_) + " (" +
                                             std::to_string(store_.compacted_through(type()) + 1) +
                                             "): the watcher fell behind the server's watch history"));
    batch_strings_.push_back(chunk_header(line.size()) + line + crlf);
    batch.pieces.emplace_back(batch_strings_.back());
    ending_ = true;
    batch_strings_.push_back("0\r\n\r\n");
    batch.pieces.emplace_back(batch_strings_.back());
    batch.fell_behind = true;
    return;
  }
  std::size_t bytes = 0;
  std::size_t header_slot = 0;
  for (const auto& event : events) {
    position_ = event->resource_version;
    const std::string* line = line_for(*event, plan_.filter, batch_scratch_);
    if (!line) continue;
    if (plan_.rewrite_line) {  // a Table watch
      batch_scratch_.push_back(plan_.rewrite_line(*line));
      line = &batch_scratch_.back();
    }
    if (bytes == 0) {
      batch_strings_.emplace_back();  // the chunk header, sized below
      header_slot = batch.pieces.size();
      batch.pieces.emplace_back();
    }
    batch.pieces.emplace_back(*line);
    bytes += line->size();
    batch_events_.push_back(event);  // keeps event->line alive while it is written
    ++batch.events;
    if (bytes >= max_batch_bytes) break;
  }
  if (bytes == 0) return;
  batch_strings_.back() = chunk_header(bytes);
  batch.pieces[header_slot] = batch_strings_.back();
  batch.pieces.emplace_back(crlf);
}

}  // namespace kinformer::apiserver
