package dev.rdmarpc.core.spi;

/**
 * A stream transport implementation (TCP), found with {@link java.util.ServiceLoader}. Every
 * connection starts on it; see {@link ConnectionUpgrader} for moving to RDMA after HELLO.
 */
public interface TransportProvider {
    /** "tcp". */
    String name();

    /** Higher wins when several are present. */
    int priority();

    ClientTransport newClientTransport(TransportConfig config);

    ServerTransport newServerTransport(TransportConfig config);
}
