// /metrics over HTTP with libmicrohttpd: one internal polling thread,
// bounded connections, header memory and idle time, so that no client can
// make the daemon grow or stall its sampling (Documentation/hwsigd.rst).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

struct MHD_Daemon;

namespace hwsigd {

struct HttpRequest {
	std::string_view path;
	std::string_view accept; // the Accept header, "" if none
	bool gzip_ok = false;    // Accept-Encoding lets the body be gzipped
};

struct HttpReply {
	unsigned status = 200;
	std::string content_type = "text/plain; charset=utf-8";
	std::string body;
	bool gzipped = false;  // body is gzip: Content-Encoding: gzip
	std::string vary = ""; // the request headers the reply depends on, "" if none
};

// Called on the server's thread for every complete GET or HEAD.
using HttpHandler = std::function<HttpReply(const HttpRequest &request)>;

struct HttpLimits {
	unsigned connections = 64;        // beyond this, new ones wait in the listen queue
	unsigned per_ip_connections = 32; // half the slots: no one address takes them all
	unsigned idle_timeout_s = 5;      // a client silent this long is dropped
	// A request (all its headers) must arrive within this long of the
	// connection opening or of the previous answer: a client that drips a
	// byte now and then never goes idle, and would otherwise hold its slot
	// for ever.
	unsigned request_deadline_s = 5;
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

	// Called on the server's thread (libmicrohttpd callbacks).
	void connection_opened(const void *conn, int fd);
	void connection_closed(const void *conn);
	void request_answered(const void *conn);

private:
	void enforce_deadlines();

	HttpHandler handler_;
	HttpLimits limits_;
	MHD_Daemon *daemon_ = nullptr;
	struct Open {
		int fd;
		std::uint64_t since_ns; // opened, or last answered
	};
	std::mutex mu_;
	std::map<const void *, Open> open_;
	std::condition_variable stop_cv_;
	bool stopping_ = false;
	std::thread reaper_;
};

} // namespace hwsigd
