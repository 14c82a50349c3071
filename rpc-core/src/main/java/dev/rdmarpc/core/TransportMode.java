package dev.rdmarpc.core;

/** How a connection picks its transport after the HELLO exchange. */
public enum TransportMode {
    /** RDMA when both sides have an active RDMA port, TCP otherwise. */
    AUTO,
    /** RDMA or fail the connection. */
    RDMA,
    /** TCP even when RDMA is possible. */
    TCP
}
