// A small HTTP/1.1 server on Boost.Beast for `wscsl explore`: loopback by default, bounded
// request sizes, per-connection timeouts and a connection cap, stopped by SIGINT or SIGTERM. It
// knows nothing of indexes or runs: every request goes to one handler (explore_routes.hpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace wscsl::host::explore {

enum class HttpMethod { Get, Head, Post, Other };

struct HttpRequest {
  HttpMethod method = HttpMethod::Get;
  std::string path;                          // percent-decoded, without the query string
  std::map<std::string, std::string> query;  // percent-decoded; the last of a repeated name
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  bool cacheable = false;  // the same for the server's life: the browser may keep it
};

// A 4xx or 5xx answer of one sentence.
HttpResponse error_response(int status, const std::string& sentence);

struct ServerLimits {
  std::size_t max_body_bytes = 16u << 20;  // an upload larger is answered 413
  std::size_t max_header_bytes = 16u << 10;
  std::size_t max_connections = 128;  // more at once are answered 503
  std::chrono::seconds idle_timeout{15};
  int threads = 4;
};

using Handler = std::function<HttpResponse(const HttpRequest&)>;

// Splits a request target into its decoded path and query; false when it is not a valid origin
// form (no leading '/', a bad %-escape, a NUL byte).
bool parse_target(const std::string& target, std::string& path,
                  std::map<std::string, std::string>& query);

struct ServerState;

class HttpServer {
 public:
  // Binds host:port (port 0: one the kernel chooses); throws Error naming the address when it
  // cannot.
  HttpServer(const std::string& host, unsigned short port, ServerLimits limits, Handler handler);
  ~HttpServer();
  unsigned short port() const;
  // Serves until SIGINT or SIGTERM, then closes every connection and returns.
  void serve_until_signal();

 private:
  std::unique_ptr<ServerState> state_;
};

}  // namespace wscsl::host::explore
