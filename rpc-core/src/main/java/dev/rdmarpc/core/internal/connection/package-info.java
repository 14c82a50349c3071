/**
 * One transport connection as both sides see it: the HELLO exchange and upgrade, connection-level frames (PING,
 * GOAWAY, the connection WINDOW), the control-frame budget and late-frame allowance, keepalive, the table of a
 * connection's streams, the settings and guards a side applies to its connections, and the transports found on the
 * class path. {@link dev.rdmarpc.core.internal.connection.Connection} is the base of the client's and the server's
 * connection. Depends on {@code flow}, {@code exec} and {@code metrics}, never on the calls, channels or servers
 * built on it.
 */
package dev.rdmarpc.core.internal.connection;
