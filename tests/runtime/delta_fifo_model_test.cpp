// Randomized operation sequences checked against a reference model of the
// DeltaFIFO (informer-semantics.md §3 written as plainly as possible: a vector of
// (key, deltas) and a map of known keys). After every operation the FIFO's whole
// observable state must equal the model's.
#include "runtime/delta_fifo.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/objects.hpp"

using kinformer::Delta;
using kinformer::DeltaFIFO;
using kinformer::DeltaFIFOOptions;
using kinformer::Deltas;
using kinformer::DeltaType;
using kinformer::Errc;
using kinformer::Error;
using kinformer::ObjectPtr;
using kinformer::PoppedDeltas;
using kinformer::Result;
using kinformer::testing::pod;

namespace {

struct ModelDelta {
  DeltaType type;
  std::string rv;  // of the (newest) object; "-" for a tombstone without one
  bool tombstone;
  bool operator==(const ModelDelta& o) const { return type == o.type && rv == o.rv && tombstone == o.tombstone; }
};
using ModelDeltas = std::vector<ModelDelta>;

ModelDeltas describe(const Deltas& deltas) {
  ModelDeltas out;
  for (const Delta& d : deltas)
    out.push_back({d.type, d.newest_object() ? std::string(d.newest_object()->resource_version()) : "-",
                   d.is_tombstone()});
  return out;
}

class FifoModel {
 public:
  FifoModel(bool emit_replaced, bool track_known) : emit_replaced_(emit_replaced), track_known_(track_known) {}

  void add(const std::string& key, const std::string& rv, DeltaType type) {
    populated_ = true;
    append(key, {type, rv, false});
  }

  void remove(const std::string& key, const std::string& rv) {
    populated_ = true;
    if (!queued(key) && !(track_known_ && known_.count(key))) return;
    append(key, {DeltaType::deleted, rv, false});
  }

  /// Returns where the unordered part (tombstones of known keys) starts.
  std::size_t replace(const std::vector<std::pair<std::string, std::string>>& list) {
    std::set<std::string> listed;
    for (const auto& [key, rv] : list) {
      listed.insert(key);
      append(key, {emit_replaced_ ? DeltaType::replaced : DeltaType::sync, rv, false});
    }
    std::size_t deletions = 0;
    for (auto& [key, deltas] : queue_) {
      if (listed.count(key)) continue;
      std::string last = deltas.back().rv;
      append(key, {DeltaType::deleted, last, true});
      ++deletions;
    }
    const std::size_t mark = queue_.size();
    if (track_known_) {
      for (const auto& [key, rv] : known_) {
        if (listed.count(key) || queued(key)) continue;
        append(key, {DeltaType::deleted, rv, true});
        ++deletions;
      }
    }
    if (!populated_) {
      populated_ = true;
      initial_ = listed.size() + deletions;
    }
    return mark;
  }

  std::size_t resync() {
    const std::size_t mark = queue_.size();
    if (!track_known_) return mark;
    for (const auto& [key, rv] : known_)
      if (!queued(key)) append(key, {DeltaType::sync, rv, false});
    return mark;
  }

  struct Popped {
    std::string key;
    ModelDeltas deltas;
    bool initial;
  };
  std::optional<Popped> pop(bool requeue) {
    if (queue_.empty()) return std::nullopt;
    Popped p{queue_.front().first, queue_.front().second, !synced()};
    queue_.erase(queue_.begin());
    if (initial_ > 0) --initial_;
    if (requeue) add_if_not_present(p.key, p.deltas);
    else if (track_known_) {
      if (p.deltas.back().type == DeltaType::deleted) known_.erase(p.key);
      else known_[p.key] = p.deltas.back().rv;
    }
    return p;
  }

  void add_if_not_present(const std::string& key, const ModelDeltas& deltas) {
    populated_ = true;
    if (!queued(key)) queue_.emplace_back(key, deltas);
  }

  bool synced() const { return populated_ && initial_ == 0; }

  /// Adopts the FIFO's order for entries from `mark` on, after checking they are
  /// the same keys: the contract leaves the order of those appends open.
  void adopt_order_from(std::size_t mark, const std::vector<std::string>& fifo_keys) {
    REQUIRE(fifo_keys.size() == queue_.size());
    std::map<std::string, ModelDeltas> tail;
    for (std::size_t i = mark; i < queue_.size(); ++i) tail.emplace(queue_[i].first, queue_[i].second);
    queue_.resize(mark);
    for (std::size_t i = mark; i < fifo_keys.size(); ++i) {
      auto it = tail.find(fifo_keys[i]);
      INFO("FIFO appended " << fifo_keys[i] << " which the model did not");
      REQUIRE(it != tail.end());
      queue_.emplace_back(it->first, it->second);
    }
  }

  void check_equal(const DeltaFIFO& fifo) const {
    std::vector<std::string> keys;
    for (const auto& [key, deltas] : queue_) keys.push_back(key);
    REQUIRE(fifo.list_keys() == keys);
    for (const auto& [key, deltas] : queue_) {
      auto got = fifo.get_by_key(key);
      REQUIRE(got);
      INFO("deltas of " << key);
      REQUIRE(describe(*got) == deltas);
    }
    REQUIRE(fifo.has_synced() == synced());
    REQUIRE(fifo.known_count() == (track_known_ ? known_.size() : 0));
    for (const auto& [key, rv] : known_) {
      ObjectPtr object = fifo.known_object(key);
      REQUIRE(object);
      REQUIRE(object->resource_version() == rv);
    }
  }

 private:
  bool queued(const std::string& key) const {
    return std::any_of(queue_.begin(), queue_.end(), [&](const auto& e) { return e.first == key; });
  }
  void append(const std::string& key, ModelDelta d) {
    for (auto& [k, deltas] : queue_) {
      if (k != key) continue;
      if (deltas.back().type == DeltaType::deleted && d.type == DeltaType::deleted) {
        if (deltas.back().tombstone) deltas.back() = d;
      } else {
        deltas.push_back(d);
      }
      return;
    }
    queue_.emplace_back(key, ModelDeltas{d});
  }

  bool emit_replaced_;
  bool track_known_;
  std::vector<std::pair<std::string, ModelDeltas>> queue_;
  std::map<std::string, std::string> known_;
  bool populated_ = false;
  std::size_t initial_ = 0;
};

void run_sequence(std::uint32_t seed, bool emit_replaced, bool track_known, int ops) {
  INFO("seed " << seed << ", emit_replaced " << emit_replaced << ", track_known " << track_known);
  DeltaFIFOOptions options;
  options.emit_delta_type_replaced = emit_replaced;
  options.track_known_objects = track_known;
  DeltaFIFO fifo(options);
  FifoModel model(emit_replaced, track_known);
  std::mt19937 rng(seed);
  int rv = 0;
  std::vector<PoppedDeltas> popped_history;
  auto name = [&] { return "k" + std::to_string(rng() % 8); };
  auto ok = [](const Result<void>& r) { REQUIRE(r); };

  for (int op = 0; op < ops; ++op) {
    const unsigned dice = rng() % 100;
    const std::string n = name();
    const std::string key = "default/" + n;
    const std::string v = std::to_string(++rv);
    INFO("op " << op << " dice " << dice << " key " << key);
    if (dice < 20) {
      ok(fifo.add(pod(n, v)));
      model.add(key, v, DeltaType::added);
    } else if (dice < 32) {
      ok(fifo.update(pod(n, v)));
      model.add(key, v, DeltaType::updated);
    } else if (dice < 47) {
      ok(fifo.delete_object(pod(n, v)));
      model.remove(key, v);
    } else if (dice < 53) {
      std::vector<ObjectPtr> list;
      std::vector<std::pair<std::string, std::string>> model_list;
      const unsigned count = rng() % 6;
      for (unsigned i = 0; i < count; ++i) {
        const std::string ln = name();
        const std::string lv = std::to_string(++rv);
        list.push_back(pod(ln, lv));
        model_list.emplace_back("default/" + ln, lv);
      }
      ok(fifo.replace(list, v));
      model.adopt_order_from(model.replace(model_list), fifo.list_keys());
    } else if (dice < 58) {
      ok(fifo.resync());
      model.adopt_order_from(model.resync(), fifo.list_keys());
    } else if (dice < 90) {
      const bool requeue = dice >= 85;
      auto got = fifo.pop([&](const PoppedDeltas&) -> Result<void> {
        if (requeue) return Error{Errc::requeue, ""};
        return {};
      });
      auto expected = model.pop(requeue);
      REQUIRE(got);
      REQUIRE(got->has_value() == expected.has_value());
      if (expected) {
        const PoppedDeltas& p = **got;
        CHECK(p.deltas.back().key() == expected->key);
        CHECK(describe(p.deltas) == expected->deltas);
        CHECK(p.is_in_initial_list == expected->initial);
        popped_history.push_back(p);
      }
    } else if (!popped_history.empty()) {
      const PoppedDeltas& old = popped_history[rng() % popped_history.size()];
      fifo.add_if_not_present(old.deltas);
      model.add_if_not_present(std::string(old.deltas.back().key()), describe(old.deltas));
    }
    model.check_equal(fifo);
  }
}

}  // namespace

TEST_CASE("random operation sequences leave the FIFO exactly where the reference model is",
          "[delta_fifo][model][unit]") {
  for (std::uint32_t seed = 1; seed <= 3; ++seed) {
    run_sequence(seed, true, true, 3000);
    run_sequence(seed + 100, false, true, 3000);
    run_sequence(seed + 200, true, false, 3000);
  }
}
