#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* libmicrohttpd's calls that take variable arguments, which Swift cannot call, wrapped in calls
   with fixed ones. */

/* Starts a daemon listening on `address` (whose family and port it binds; `port`, the same, is
   the one its messages name), calling `handler`,
   `completed`, `uri_log` and `logger` with `cls`; the other options are given in `options`,
   an array ending with MHD_OPTION_END. */
static inline struct MHD_Daemon *chttp_start_daemon(unsigned int flags, uint16_t port, const struct sockaddr *address,
                                                    MHD_AccessHandlerCallback handler,
                                                    MHD_RequestCompletedCallback completed,
                                                    void *(*uri_log)(void *cls, const char *uri,
                                                                     struct MHD_Connection *connection),
                                                    MHD_LogCallback logger, void *cls,
                                                    struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, port, NULL, NULL, handler, cls,
                            MHD_OPTION_EXTERNAL_LOGGER, logger, cls,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, cls,
                            MHD_OPTION_URI_LOG_CALLBACK, uri_log, cls,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

/* The port the daemon's listening socket is bound to, or 0 if unknown. */
static inline uint16_t chttp_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/* The address of the connection's client, or NULL if unknown. */
static inline const struct sockaddr *chttp_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

/* The connection's socket, or -1 if unknown. */
static inline int chttp_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}
