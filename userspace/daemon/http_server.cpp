#include "http_server.h"

#include <cerrno>
#include <cstring>
#include <microhttpd.h>
#include <netdb.h>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>
#include <chrono>
#include <ctime>

#include "gzip.h"
#include "log.h"

namespace hwsigd {
namespace {

// "HOST:PORT" or "[V6]:PORT" -> a listening socket; throws with the reason.
int listen_on(const std::string &listen)
{
	auto colon = listen.rfind(':');
	std::string host = listen.substr(0, colon), port = listen.substr(colon + 1);
	if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
		host = host.substr(1, host.size() - 2);
	addrinfo hints{};
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	addrinfo *res = nullptr;
	if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0)
		throw std::runtime_error("listen " + listen + ": " + gai_strerror(rc));
	int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int one = 1;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		freeaddrinfo(res);
		throw std::runtime_error("listen " + listen + ": " + std::strerror(err));
	}
	freeaddrinfo(res);
	return fd;
}

MHD_Result queue(MHD_Connection *conn, const HttpReply &reply)
{
	// MUST_COPY: the body belongs to the handler's cache, not to MHD.
	MHD_Response *resp = MHD_create_response_from_buffer(reply.body.size(), const_cast<char *>(reply.body.data()),
							     MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, reply.content_type.c_str());
	if (reply.gzipped)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	if (!reply.vary.empty())
		MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, reply.vary.c_str());
	if (reply.status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	MHD_Result r = MHD_queue_response(conn, reply.status, resp);
	MHD_destroy_response(resp);
	return r;
}

std::uint64_t mono_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

void on_connection(void *cls, MHD_Connection *conn, void **, MHD_ConnectionNotificationCode what)
{
	auto *server = static_cast<HttpServer *>(cls);
	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		const MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (info)
			server->connection_opened(conn, info->connect_fd);
	} else {
		server->connection_closed(conn);
	}
}

MHD_Result on_request(void *cls, MHD_Connection *conn, const char *url, const char *method, const char *,
		      const char *, size_t *upload_size, void **state)
{
	auto *server = static_cast<HttpServer *>(cls);
	server->request_answered(conn);
	// First call: headers only. Answer on the next one, after any body.
	static int seen;
	if (*state == nullptr) {
		*state = &seen;
		return MHD_YES;
	}
	if (*upload_size != 0) {
		*upload_size = 0; // a body on GET means nothing to us: drop it
		return MHD_YES;
	}
	if (std::strcmp(method, MHD_HTTP_METHOD_GET) != 0 && std::strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return queue(conn, {MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
				    "only GET and HEAD are served\n"});
	const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	const char *encodings = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	HttpReply reply;
	try {
		reply = server->handler()({url, accept ? accept : "", encodings && accepts_gzip(encodings)});
	} catch (const std::exception &e) {
		log(Level::Error, "serving %s: %s", url, e.what());
		reply = {MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", "internal error\n"};
	}
	return queue(conn, reply);
}

void mhd_log(void *, const char *fmt, va_list ap)
{
	if (!log_enabled(Level::Debug))
		return;
	char line[512];
	std::vsnprintf(line, sizeof(line), fmt, ap);
	if (size_t n = std::strlen(line); n && line[n - 1] == '\n')
		line[n - 1] = '\0';
	log(Level::Debug, "http: %s", line);
}

} // namespace

HttpServer::HttpServer(const std::string &listen, HttpHandler handler, HttpLimits limits)
	: handler_(std::move(handler)), limits_(limits)
{
	int fd = listen_on(listen);
	// The logger first: options before it would log through MHD's own.
	daemon_ = MHD_start_daemon(
		MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, nullptr, nullptr, &on_request, this,
		MHD_OPTION_EXTERNAL_LOGGER, &mhd_log, nullptr, MHD_OPTION_LISTEN_SOCKET, fd,
		MHD_OPTION_CONNECTION_LIMIT, limits.connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		limits.per_ip_connections, MHD_OPTION_CONNECTION_TIMEOUT, limits.idle_timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, limits.request_memory, MHD_OPTION_NOTIFY_CONNECTION,
		&on_connection, this, MHD_OPTION_END);
	if (!daemon_) {
		close(fd);
		throw std::runtime_error("listen " + listen + ": the HTTP server did not start");
	}
	reaper_ = std::thread([this] { enforce_deadlines(); });
}

HttpServer::~HttpServer()
{
	{
		std::lock_guard lock(mu_);
		stopping_ = true;
	}
	stop_cv_.notify_all();
	reaper_.join();
	// Closes the listening socket too (MHD owns it once started).
	MHD_stop_daemon(daemon_);
}

void HttpServer::connection_opened(const void *conn, int fd)
{
	{
		std::lock_guard lock(mu_);
		open_[conn] = {fd, mono_ns()};
	}
	stop_cv_.notify_all(); // the reaper sleeps while no connection is open
}

void HttpServer::connection_closed(const void *conn)
{
	std::lock_guard lock(mu_);
	open_.erase(conn);
}

void HttpServer::request_answered(const void *conn)
{
	std::lock_guard lock(mu_);
	if (auto it = open_.find(conn); it != open_.end())
		it->second.since_ns = mono_ns();
}

// Once a second: a connection that has not completed a request within the
// deadline is shut down (not closed: the fd is libmicrohttpd's, which then
// sees the end of the stream and cleans up on its own thread). Opening,
// closing and this run under one mutex, and libmicrohttpd reports a close
// before it reuses the fd, so the fd shut down is always the one recorded.
void HttpServer::enforce_deadlines()
{
	const std::uint64_t deadline_ns = static_cast<std::uint64_t>(limits_.request_deadline_s) * 1000000000ull;
	std::unique_lock lock(mu_);
	for (;;) {
		// No connection, nothing to time: sleep until one opens (an idle
		// daemon must not wake every second for nothing).
		stop_cv_.wait(lock, [this] { return stopping_ || !open_.empty(); });
		if (stop_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; }))
			return;
		const std::uint64_t now = mono_ns();
		for (auto &[conn, o] : open_) {
			if (o.fd < 0 || now - o.since_ns < deadline_ns)
				continue;
			log(Level::Debug, "http: a client took over %u s to send its request: closed",
			    limits_.request_deadline_s);
			shutdown(o.fd, SHUT_RDWR);
			o.fd = -1; // once
		}
	}
}

} // namespace hwsigd
