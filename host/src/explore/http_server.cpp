#include "http_server.hpp"

#include <array>
#include <atomic>
#include <csignal>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "wscsl/error.hpp"

namespace wscsl::host::explore {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

HttpResponse error_response(int status, const std::string& sentence) {
  HttpResponse r;
  r.status = status;
  r.body = sentence + "\n";
  return r;
}

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool percent_decode(const std::string& in, bool plus_is_space, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      const int hi = hex_digit(in[i + 1]), lo = hex_digit(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      c = ' ';
    }
    if (c == '\0') return false;
    out += c;
  }
  return true;
}

HttpMethod method_of(http::verb verb) {
  switch (verb) {
    case http::verb::get:
      return HttpMethod::Get;
    case http::verb::head:
      return HttpMethod::Head;
    case http::verb::post:
      return HttpMethod::Post;
    default:
      return HttpMethod::Other;
  }
}

}  // namespace

bool parse_target(const std::string& target, std::string& path,
                  std::map<std::string, std::string>& query) {
  if (target.empty() || target[0] != '/') return false;
  const std::size_t mark = target.find('?');
  if (!percent_decode(target.substr(0, mark), false, path)) return false;
  query.clear();
  if (mark == std::string::npos) return true;
  const std::string rest = target.substr(mark + 1);
  std::size_t start = 0;
  while (start <= rest.size()) {
    const std::size_t end = std::min(rest.find('&', start), rest.size());
    const std::string pair = rest.substr(start, end - start);
    if (!pair.empty()) {
      const std::size_t eq = pair.find('=');
      std::string name, value;
      if (!percent_decode(pair.substr(0, eq), true, name)) return false;
      if (eq != std::string::npos && !percent_decode(pair.substr(eq + 1), true, value))
        return false;
      query[name] = value;
    }
    start = end + 1;
  }
  return true;
}

// The io_context is destroyed after the acceptor and before what its pending connections use.
struct ServerState {
  ServerLimits limits;
  Handler handler;
  std::atomic<std::size_t> connections{0};
  asio::io_context io;
  tcp::acceptor acceptor{io};
  void accept();
};

namespace {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, ServerState& server)
      : stream_(std::move(socket)), server_(server) {}
  ~Connection() { --server_.connections; }

  void start(bool refuse) {
    if (refuse) {
      respond(error_response(503, "The explorer has too many connections open; try again."), false,
              11);
      return;
    }
    read();
  }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(server_.limits.max_body_bytes);
    parser_->header_limit(static_cast<std::uint32_t>(server_.limits.max_header_bytes));
    stream_.expires_after(server_.limits.idle_timeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::body_limit) {
      respond(error_response(413, fmt::format("The request body is over the explorer's limit of "
                                              "{} bytes.",
                                              server_.limits.max_body_bytes)),
              false, 11);
      return;
    }
    if (ec == http::error::header_limit) {
      respond(error_response(431, "The request's header is over the explorer's limit."), false, 11);
      return;
    }
    if (ec) {
      close();
      return;
    }
    const http::request<http::string_body>& req = parser_->get();
    const bool keep_alive = req.keep_alive();
    HttpRequest request;
    request.method = method_of(req.method());
    if (!parse_target(std::string(req.target()), request.path, request.query)) {
      respond(error_response(400, "The request's target is not a path with a valid query."),
              keep_alive, req.version());
      return;
    }
    request.body = req.body();
    HttpResponse response;
    try {
      response = server_.handler(request);
    } catch (const std::exception& e) {
      response = error_response(500, e.what());
    }
    if (request.method == HttpMethod::Head) response.body.clear();
    respond(response, keep_alive, req.version());
  }

  void respond(const HttpResponse& r, bool keep_alive, unsigned version) {
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(r.status), version);
    res->set(http::field::server, "wscsl-explore");
    res->set(http::field::content_type, r.content_type);
    res->set(http::field::cache_control, r.cacheable ? "max-age=3600" : "no-store");
    res->set("X-Content-Type-Options", "nosniff");
    res->keep_alive(keep_alive);
    res->body() = r.body;
    res->prepare_payload();
    stream_.expires_after(server_.limits.idle_timeout);
    http::async_write(
        stream_, *res,
        [self = shared_from_this(), res, keep_alive](beast::error_code ec, std::size_t) {
          if (ec || !keep_alive)
            self->close();
          else
            self->read();
        });
  }

  // Ends the answer, then reads what the client still sends (an upload refused mid-way) for a
  // bounded time, so that closing does not reset the connection before the client read it.
  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(std::chrono::seconds(2));
    drain();
  }

  void drain() {
    stream_.async_read_some(asio::buffer(discard_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (!ec) self->drain();
                            });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::array<char, 4096> discard_{};
  std::optional<http::request_parser<http::string_body>> parser_;
  ServerState& server_;
};

}  // namespace

void ServerState::accept() {
  acceptor.async_accept(asio::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
    if (ec) return;  // the acceptor was closed: shutting down
    const bool refuse = ++connections > limits.max_connections;
    std::make_shared<Connection>(std::move(socket), *this)->start(refuse);
    accept();
  });
}

HttpServer::HttpServer(const std::string& host, unsigned short port, ServerLimits limits,
                       Handler handler)
    : state_(std::make_unique<ServerState>()) {
  state_->limits = limits;
  state_->handler = std::move(handler);
  beast::error_code ec;
  const asio::ip::address address = asio::ip::make_address(host, ec);
  if (ec) throw Error(fmt::format("--host {}: not an IP address", host));
  const tcp::endpoint endpoint(address, port);
  state_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) state_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) state_->acceptor.bind(endpoint, ec);
  if (!ec) state_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec == asio::error::address_in_use)
    throw Error(
        fmt::format("cannot listen on {}:{}: {}; give another port with --port (--port 0: "
                    "one the system chooses)",
                    host, port, ec.message()));
  if (ec == boost::system::errc::address_not_available)
    throw Error(
        fmt::format("cannot listen on {}:{}: {}; give --host an address of this machine "
                    "(127.0.0.1: this machine alone, 0.0.0.0: every interface)",
                    host, port, ec.message()));
  if (ec) throw Error(fmt::format("cannot listen on {}:{}: {}", host, port, ec.message()));
}

HttpServer::~HttpServer() = default;

unsigned short HttpServer::port() const {
  return state_->acceptor.local_endpoint().port();
}

void HttpServer::serve_until_signal() {
  asio::signal_set signals(state_->io, SIGINT, SIGTERM);
  signals.async_wait([this](beast::error_code, int) {
    beast::error_code ignored;
    state_->acceptor.close(ignored);
    state_->io.stop();
  });
  state_->accept();
  std::vector<std::thread> threads;
  for (int i = 1; i < state_->limits.threads; ++i)
    threads.emplace_back([this] { state_->io.run(); });
  state_->io.run();
  for (std::thread& t : threads)
    t.join();
}

}  // namespace wscsl::host::explore
