#include "runtime/http/kubeconfig.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace kinformer::http {
namespace {

Error fail(std::string message) { return Error{Errc::server_error, std::move(message)}; }

Result<std::string> read_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("cannot read " + what + " file " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

std::string resolve(const std::string& path, const std::string& base) {
  if (path.empty() || path.front() == '/') return path;
  return base + "/" + path;
}

// One named entry (a cluster, user or context) and the file that defined it.
struct Entry {
  YAML::Node node;
  std::string dir;
};

struct Merged {
  std::map<std::string, Entry> clusters, users, contexts;
  std::string current_context;
};

Result<void> merge_file(const std::string& path, Merged& merged) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    // e.mark names the line; the message never echoes a scalar's value.
    return fail("kubeconfig " + path + " is not valid YAML (line " + std::to_string(e.mark.line + 1) +
                ", column " + std::to_string(e.mark.column + 1) + ")");
  }
  if (root.IsNull()) return {};
  if (!root.IsMap()) return fail("kubeconfig " + path + " is not a YAML mapping");
  const std::string dir = directory_of(path);
  const auto take = [&](const char* list, const char* field,
                        std::map<std::string, Entry>& into) -> Result<void> {
    const YAML::Node entries = root[list];
    if (!entries) return {};
    if (!entries.IsSequence()) return fail("kubeconfig " + path + ": '" + list + "' is not a list");
    for (const auto& entry : entries) {
      if (!entry.IsMap() || !entry["name"] || !entry["name"].IsScalar())
        return fail("kubeconfig " + path + ": an entry of '" + list + "' has no name");
      const auto name = entry["name"].as<std::string>();
      if (!entry[field] || !entry[field].IsMap())
        return fail("kubeconfig " + path + ": " + list + " entry '" + name + "' has no '" + field +
                    "' mapping");
      into.emplace(name, Entry{entry[field], dir});  // the first file wins
    }
    return {};
  };
  if (auto r = take("clusters", "cluster", merged.clusters); !r) return r;
  if (auto r = take("users", "user", merged.users); !r) return r;
  if (auto r = take("contexts", "context", merged.contexts); !r) return r;
  if (merged.current_context.empty() && root["current-context"] && root["current-context"].IsScalar())
    merged.current_context = root["current-context"].as<std::string>();
  return {};
}

std::string scalar(const YAML::Node& map, const char* key) {
  const YAML::Node value = map[key];
  return value && value.IsScalar() ? value.as<std::string>() : std::string();
}

Result<std::string> decode_base64(const std::string& text, const std::string& what) {
  // yaml-cpp 0.7's DecodeBase64 indexes its table with a signed char: a byte >= 0x80 reads
  // before the table and can crash (found by fuzz_kubeconfig, issue 19). Only the alphabet,
  // '=' and the whitespace it skips may reach it.
  for (unsigned char c : text) {
    const bool alphabet = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                          c == '+' || c == '/' || c == '=';
    if (!alphabet && c != ' ' && c != '\t' && c != '\n' && c != '\r')
      return fail(what + " is not valid base64");
  }
  std::vector<unsigned char> bytes = YAML::DecodeBase64(text);
  if (bytes.empty() && !text.empty()) return fail(what + " is not valid base64");
  return std::string(bytes.begin(), bytes.end());
}

// "-data" wins over the file, as in client-go.
Result<std::string> data_or_file(const Entry& entry, const char* data_key, const char* file_key,
                                 const std::string& what) {
  if (auto data = scalar(entry.node, data_key); !data.empty())
    return decode_base64(data, what + " (" + data_key + ")");
  if (auto file = scalar(entry.node, file_key); !file.empty())
    return read_file(resolve(file, entry.dir), what);
  return std::string();
}

}  // namespace

Result<ClientConfig> load_kubeconfig(const KubeconfigOptions& options) {
  std::vector<std::string> paths = options.paths;
  bool skip_missing = false;
  if (paths.empty()) {
    if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
      std::stringstream list(env);
      for (std::string path; std::getline(list, path, ':');)
        if (!path.empty()) paths.push_back(path);
      skip_missing = true;
    } else if (const char* home = std::getenv("HOME"); home && *home) {
      paths.push_back(std::string(home) + "/.kube/config");
    }
  }
  if (paths.empty()) return fail("no kubeconfig: KUBECONFIG is unset and HOME is not known");
  Merged merged;
  std::size_t read = 0;
  for (const auto& path : paths) {
    if (skip_missing && !std::ifstream(path)) continue;
    if (!std::ifstream(path)) return fail("cannot read kubeconfig " + path);
    if (auto merged_ok = merge_file(path, merged); !merged_ok) return merged_ok.error();
    ++read;
  }
  if (read == 0) return fail("none of the kubeconfig files in KUBECONFIG can be read");

  const std::string context_name = options.context.empty() ? merged.current_context : options.context;
  if (context_name.empty()) return fail("the kubeconfig sets no current-context and none was asked for");
  auto context = merged.contexts.find(context_name);
  if (context == merged.contexts.end())
    return fail("context '" + context_name + "' is not in the kubeconfig");
  const std::string cluster_name = scalar(context->second.node, "cluster");
  const std::string user_name = scalar(context->second.node, "user");
  auto cluster = merged.clusters.find(cluster_name);
  if (cluster == merged.clusters.end())
    return fail("context '" + context_name + "' names cluster '" + cluster_name +
                "', which is not in the kubeconfig");

  ClientConfig config;
  config.server = scalar(cluster->second.node, "server");
  if (config.server.empty()) return fail("cluster '" + cluster_name + "' has no server");
  if (auto ns = scalar(context->second.node, "namespace"); !ns.empty()) config.namespace_ = ns;
  config.tls_server_name = scalar(cluster->second.node, "tls-server-name");
  try {
    const YAML::Node insecure = cluster->second.node["insecure-skip-tls-verify"];
    config.insecure_skip_tls_verify = insecure && insecure.as<bool>(false);
  } catch (const YAML::Exception&) {
    return fail("cluster '" + cluster_name + "': insecure-skip-tls-verify is not a boolean");
  }
  auto ca = data_or_file(cluster->second, "certificate-authority-data", "certificate-authority",
                         "cluster '" + cluster_name + "' certificate-authority");
  if (!ca) return ca.error();
  config.ca_pem = std::move(ca).value();

  if (!user_name.empty()) {
    auto user = merged.users.find(user_name);
    if (user == merged.users.end())
      return fail("context '" + context_name + "' names user '" + user_name +
                  "', which is not in the kubeconfig");
    const std::string what = "user '" + user_name + "'";
    auto cert = data_or_file(user->second, "client-certificate-data", "client-certificate",
                             what + " client-certificate");
    if (!cert) return cert.error();
    auto key = data_or_file(user->second, "client-key-data", "client-key", what + " client-key");
    if (!key) return key.error();
    config.client_cert_pem = std::move(cert).value();
    config.client_key_pem = std::move(key).value();
    config.token = scalar(user->second.node, "token");
    if (auto file = scalar(user->second.node, "tokenFile"); !file.empty()) {
      config.token_file = resolve(file, user->second.dir);
      if (!std::ifstream(config.token_file))
        return fail(what + ": cannot read its tokenFile " + config.token_file);
    }
  }
  return config;
}

Result<ClientConfig> in_cluster_config(const std::string& root) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port)
    return fail("not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set");
  ClientConfig config;
  const std::string h = host;
  config.server = "https://" + (h.find(':') != std::string::npos ? "[" + h + "]" : h) + ":" + port;
  auto ca = read_file(root + "/ca.crt", "service-account CA");
  if (!ca) return ca.error();
  config.ca_pem = std::move(ca).value();
  config.token_file = root + "/token";
  if (!std::ifstream(config.token_file))
    return fail("cannot read the service-account token file " + config.token_file);
  if (auto ns = read_file(root + "/namespace", "namespace")) {
    std::string text = std::move(ns).value();
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (!text.empty()) config.namespace_ = text;
  }
  return config;
}

bool ServerFlags::take(std::string_view flag, const char* value) {
  std::string* field = flag == "--server"       ? &server
                       : flag == "--token-file" ? &token_file
                       : flag == "--kubeconfig" ? &kubeconfig
                       : flag == "--context"    ? &context
                                                : nullptr;
  if (field) *field = value;
  return field != nullptr;
}

Result<ClientConfig> client_config_from(const ServerFlags& flags) {
  if (!flags.server.empty()) {
    ClientConfig config;
    config.server = flags.server;
    config.token_file = flags.token_file;
    return config;
  }
  KubeconfigOptions options;
  if (!flags.kubeconfig.empty()) options.paths.push_back(flags.kubeconfig);
  options.context = flags.context;
  auto config = load_kubeconfig(options);
  if (!config && flags.kubeconfig.empty() && std::getenv("KUBERNETES_SERVICE_HOST")) return in_cluster_config();
  return config;
}

}  // namespace kinformer::http
