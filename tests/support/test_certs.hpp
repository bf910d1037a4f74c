// tests/support/test_certs.hpp
//
// TestCerts: a throwaway PKI made with the openssl CLI in a temp directory — a CA,
// a server certificate for localhost / 127.0.0.1 signed by it, a client
// certificate signed by it, and a second, unrelated CA — for TLS tests.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace kinformer::testing {

class TestCerts {
 public:
  TestCerts() {
    char pattern[] = "/tmp/kinformer-certs-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
    ok_ =
        run("openssl req -x509 " + key + " -keyout ca.key -out ca.crt -days 2 -subj /CN=kinformer-test-ca") &&
        run("openssl req -x509 " + key +
            " -keyout other-ca.key -out other-ca.crt -days 2 -subj /CN=other-ca") &&
        run("openssl req " + key + " -keyout server.key -out server.csr -subj /CN=localhost") &&
        run("printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > server.ext") &&
        run("openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days "
            "2 "
            "-extfile server.ext") &&
        run("openssl req " + key + " -keyout client.key -out client.csr -subj /CN=kinformer-client") &&
        run("printf 'extendedKeyUsage=clientAuth\\n' > client.ext") &&
        run("openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days "
            "2 "
            "-extfile client.ext");
  }
  ~TestCerts() { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  TestCerts(const TestCerts&) = delete;
  TestCerts& operator=(const TestCerts&) = delete;

  /// false when the openssl CLI failed (the test then fails saying so).
  bool ok() const { return ok_; }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string read(const std::string& name) const {
    std::ifstream in(path(name));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  bool run(const std::string& command) const {
    return std::system(("cd '" + dir_ + "' && (" + command + ") > /dev/null 2>&1").c_str()) == 0;
  }
  std::string dir_;
  bool ok_ = false;
};

}  // namespace kinformer::testing
