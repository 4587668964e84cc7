// /metrics over HTTP with libmicrohttpd: one internal polling thread,
// bounded connections, header memory and idle time, so that no client can
// make the daemon grow or stall its sampling (Documentation/hwsigd.rst).
#pragma once

#include <functional>
#include <string>
#include <string_view>

struct MHD_Daemon;

namespace hwsigd {

struct HttpReply {
	unsigned status = 200;
	std::string content_type = "text/plain; charset=utf-8";
	std::string body;
};

// Called on the server's thread for every complete GET or HEAD.
using HttpHandler = std::function<HttpReply(std::string_view path, std::string_view accept)>;

struct HttpLimits {
	unsigned connections = 64;      // beyond this, new connections are closed at once
	unsigned idle_timeout_s = 5;    // a client silent this long is dropped
	std::size_t request_memory = 32 * 1024; // headers beyond this: 431
};

class HttpServer {
public:
	// listen: "HOST:PORT" ("[::1]:9863" for IPv6). Throws std::runtime_error
	// "listen ADDR: <why>" when it cannot bind.
	HttpServer(const std::string &listen, HttpHandler handler, HttpLimits limits = {});
	~HttpServer();
	HttpServer(const HttpServer &) = delete;
	HttpServer &operator=(const HttpServer &) = delete;

	const HttpHandler &handler() const { return handler_; }

private:
	HttpHandler handler_;
	MHD_Daemon *daemon_ = nullptr;
};

} // namespace hwsigd
