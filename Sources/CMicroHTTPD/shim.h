#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>
#include <microhttpd.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

/* MHD_start_daemon, MHD_get_daemon_info and MHD_get_connection_info are variadic: Swift calls these
   typed shims instead. Option values arrive as plain arguments so no intptr_t/function-pointer casts
   are needed on the Swift side. */
static inline struct MHD_Daemon *parley_mhd_start(
    unsigned int flags, uint16_t port, const struct sockaddr *bind_address,
    MHD_AcceptPolicyCallback accept_policy, void *accept_policy_cls,
    MHD_AccessHandlerCallback handler, void *handler_cls,
    MHD_RequestCompletedCallback completed, void *completed_cls,
    void *(*uri_log)(void *cls, const char *uri, struct MHD_Connection *connection), void *uri_log_cls,
    MHD_NotifyConnectionCallback notify_connection, void *notify_connection_cls,
    unsigned int thread_pool_size, unsigned int connection_limit, size_t connection_memory_limit,
    unsigned int connection_timeout, unsigned int listen_backlog)
{
    struct MHD_OptionItem options[] = {
        { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t) completed, completed_cls },
        { MHD_OPTION_URI_LOG_CALLBACK, (intptr_t) uri_log, uri_log_cls },
        { MHD_OPTION_NOTIFY_CONNECTION, (intptr_t) notify_connection, notify_connection_cls },
        { MHD_OPTION_THREAD_POOL_SIZE, (intptr_t) thread_pool_size, NULL },
        { MHD_OPTION_CONNECTION_LIMIT, (intptr_t) connection_limit, NULL },
        { MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t) connection_memory_limit, NULL },
        { MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t) connection_timeout, NULL },
        { MHD_OPTION_LISTEN_BACKLOG_SIZE, (intptr_t) listen_backlog, NULL },
        { bind_address != NULL ? MHD_OPTION_SOCK_ADDR : MHD_OPTION_END, 0, (void *) bind_address },
        { MHD_OPTION_END, 0, NULL },
    };
    return MHD_start_daemon(flags, port, accept_policy, accept_policy_cls, handler, handler_cls,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/* The port the daemon really bound (useful when 0 was asked for); 0 if unknown. */
static inline uint16_t parley_mhd_bound_port(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info != NULL ? info->port : 0;
}

/* The peer's address, or NULL. */
static inline const struct sockaddr *parley_mhd_client_address(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info != NULL ? info->client_addr : NULL;
}

/* The connection's socket, or -1. */
static inline int parley_mhd_connection_fd(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info != NULL ? info->connect_fd : -1;
}

/* The pointer the application keeps per connection (set in MHD_OPTION_NOTIFY_CONNECTION), or NULL. */
static inline void *parley_mhd_socket_context(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info != NULL ? info->socket_context : NULL;
}

/* The event-stream socket loop (ParleyHTTP/StreamSocketLoop): once libmicrohttpd has sent a stream's
   headers, the stream's body is written to its socket directly. */

/* Sends without blocking and without SIGPIPE; returns what send(2) returns (errno set on -1). */
static inline ssize_t parley_socket_send(int fd, const void *bytes, size_t count)
{
    return send(fd, bytes, count, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* 1 when the peer has closed the connection (end of file or a socket error), 0 while it is open. */
static inline int parley_socket_peer_closed(int fd)
{
    char byte;
    ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0) return 1;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return 1;
    return 0;
}

/* Every write goes out at once: no cork left from the headers, no Nagle delay. */
static inline void parley_socket_push(int fd)
{
    int off = 0, on = 1;
    (void) setsockopt(fd, IPPROTO_TCP, TCP_CORK, &off, sizeof off);
    (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

static inline int parley_errno(void) { return errno; }
