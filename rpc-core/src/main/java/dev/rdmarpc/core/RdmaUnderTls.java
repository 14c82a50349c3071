package dev.rdmarpc.core;

/**
 * Whether a connection protected by TLS may move its calls to RDMA. RoCE and InfiniBand do not encrypt: after an
 * upgrade the calls' bytes cross the fabric in clear text, only the TCP connection kept as liveness stays encrypted.
 */
public enum RdmaUnderTls {
    /**
     * The default: a TLS connection stays on TCP, encrypted and integrity-protected end to end. This side offers no
     * RDMA in its HELLO (a client) or ignores the client's offer (a server).
     */
    NEVER,
    /**
     * A TLS connection may upgrade to RDMA. TLS then authenticates both peers (the server's certificate and
     * hostname; a client certificate the server verified, without which a client stays on TLS over TCP) and protects
     * the HELLO carrying the RDMA parameters, so a queue pair is only ever created for and connected to the
     * authenticated peer; the calls themselves travel over RDMA without encryption or integrity protection beyond the
     * fabric's own checksums, though they still carry the TLS session. Use it only where the fabric itself is trusted.
     */
    AUTHENTICATE_ONLY
}
