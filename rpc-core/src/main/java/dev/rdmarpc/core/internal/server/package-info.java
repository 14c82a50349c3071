/**
 * The server side's connections: the server behind {@code RpcServer}
 * ({@link dev.rdmarpc.core.internal.server.ServerImpl}: method registry, accepted connections, shutdown) and each
 * accepted connection ({@link dev.rdmarpc.core.internal.server.ServerConnection}: stream admission, its connection
 * window, routing the client's frames to the server calls; {@link dev.rdmarpc.core.internal.server.TlsPeers} for the
 * client's certificate). Depends on the server calls it starts, on {@code connection}, {@code flow}, {@code exec} and
 * {@code metrics}; nothing of core's internals but the calls depends on it, and nothing on the client side.
 */
package dev.rdmarpc.core.internal.server;
