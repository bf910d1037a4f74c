// runtime/http/kubeconfig.hpp
//
// Where a ClientConfig comes from on a real cluster: a kubeconfig file (or
// several, merged as kubectl does) or the in-cluster service account.
//
// Contract
//   * load_kubeconfig(): the files are options.paths, else $KUBECONFIG split on
//     ':', else ~/.kube/config. Merging follows kubectl: for clusters, users and
//     contexts the first file that names an entry wins it; current-context is the
//     first non-empty one. Missing files listed in KUBECONFIG are skipped; none
//     readable at all is an error.
//   * The context is options.context, else current-context. From it: the cluster's
//     server, certificate-authority(-data), insecure-skip-tls-verify,
//     tls-server-name; the user's client-certificate(-data), client-key(-data),
//     token, tokenFile; the context's namespace (default "default"). File paths are
//     relative to the kubeconfig that names them; *-data is base64.
//   * in_cluster_config(): https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
//     with the service account's ca.crt, token (as token_file, so a rotated token
//     is re-read) and namespace, under `root` (/var/run/secrets/kubernetes.io/serviceaccount).
//   * Malformed YAML, a missing context/cluster/user, an unreadable referenced file
//     or bad base64 is Errc::server_error naming the file and the entry — never a
//     token's value.
// Threading: pure functions (they read files and the environment).
// Errors: Result; yaml-cpp's exceptions are caught here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/http/client_config.hpp"
#include "runtime/result.hpp"

namespace kinformer::http {

struct KubeconfigOptions {
  std::vector<std::string> paths;  // empty = $KUBECONFIG, else ~/.kube/config
  std::string context;             // "" = current-context
};

[[nodiscard]] Result<ClientConfig> load_kubeconfig(const KubeconfigOptions& options = {});

[[nodiscard]] Result<ClientConfig> in_cluster_config(
    const std::string& root = "/var/run/secrets/kubernetes.io/serviceaccount");

/// Where a command line says the server is, as kubectl's flags do.
struct ServerFlags {
  std::string server;      // --server URL: used as is, with token_file
  std::string token_file;  // --token-file
  std::string kubeconfig;  // --kubeconfig FILE ("" = $KUBECONFIG, ~/.kube/config)
  std::string context;     // --context NAME

  /// Stores `value` when `flag` is one of the four above (as a command line names
  /// them) and says whether it was; every program's parser uses this, never its own copy.
  bool take(std::string_view flag, const char* value);
};

/// --server when given; else the kubeconfig (and context); else, when no kubeconfig
/// was named and the process runs in a pod (KUBERNETES_SERVICE_HOST), the
/// in-cluster config. The kubeconfig's error when none of them works.
[[nodiscard]] Result<ClientConfig> client_config_from(const ServerFlags& flags);

}  // namespace kinformer::http
