package dev.rdmarpc.core.spi;

import dev.rdmarpc.core.TlsConfig;
import dev.rdmarpc.core.WireProtocol;
import dev.rdmarpc.core.buffer.SlabPool;

/**
 * Settings a transport is created with.
 *
 * @param pool                   where frame buffers come from
 * @param ioThreads              I/O threads (0: the transport's default)
 * @param nativeIo               "auto" (io_uring, then epoll, then NIO), "io_uring", "epoll" or "nio"
 * @param tls                    TLS around every connection, or null for plaintext
 * @param handshakeTimeoutMillis how long a server waits for a new connection's TLS handshake (0: the transport's default)
 * @param grpcOverHttp2          whether a server also serves gRPC over HTTP/2 clients on its port (a stream transport
 *                               that can tells them apart by their first bytes, or by ALPN under TLS)
 * @param wireProtocol           what a client speaks to servers (a stream transport that can speaks gRPC over HTTP/2
 *                               too); ignored by servers
 */
public record TransportConfig(SlabPool pool, int ioThreads, String nativeIo, TlsConfig tls, long handshakeTimeoutMillis,
                              boolean grpcOverHttp2, WireProtocol wireProtocol) {
    public TransportConfig {
        java.util.Objects.requireNonNull(wireProtocol, "wireProtocol");
    }

    /** A configuration whose clients speak {@link WireProtocol#AUTO}. */
    public TransportConfig(SlabPool pool, int ioThreads, String nativeIo, TlsConfig tls, long handshakeTimeoutMillis,
                           boolean grpcOverHttp2) {
        this(pool, ioThreads, nativeIo, tls, handshakeTimeoutMillis, grpcOverHttp2, WireProtocol.AUTO);
    }

    /** A configuration that serves rdmarpc clients only (HTTP/2 clients are refused). */
    public TransportConfig(SlabPool pool, int ioThreads, String nativeIo, TlsConfig tls, long handshakeTimeoutMillis) {
        this(pool, ioThreads, nativeIo, tls, handshakeTimeoutMillis, false);
    }

    /** A plaintext configuration. */
    public TransportConfig(SlabPool pool, int ioThreads, String nativeIo) {
        this(pool, ioThreads, nativeIo, null, 0);
    }

    public static TransportConfig defaults() {
        return new TransportConfig(SlabPool.shared(), 0, System.getProperty("rdmarpc.io", "auto"));
    }
}
