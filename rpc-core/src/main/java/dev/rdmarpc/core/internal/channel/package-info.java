/**
 * The client side's connections: the channel behind {@code RpcChannel} and {@code RpcConnection}
 * ({@link dev.rdmarpc.core.internal.channel.ChannelImpl}: one connection at a time, reconnect with
 * {@link dev.rdmarpc.core.internal.channel.ConnectBackoff}, client keepalive per
 * {@link dev.rdmarpc.core.internal.channel.ClientLiveness}) and its connection
 * ({@link dev.rdmarpc.core.internal.channel.ClientConnection}: stream ids, the stream-slot queue, routing the server's
 * frames to the client calls). Depends on the client calls it opens streams for, on {@code connection},
 * {@code exec} and {@code metrics}; nothing of core's internals but the calls depends on it, and nothing on the
 * server side.
 */
package dev.rdmarpc.core.internal.channel;
