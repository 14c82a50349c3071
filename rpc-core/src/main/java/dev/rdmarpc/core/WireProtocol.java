package dev.rdmarpc.core;

/** Which protocol a channel speaks to its server over TCP: rdmarpc's own, gRPC over HTTP/2, or whichever the server answers with. */
public enum WireProtocol {
    /**
     * The default: offer rdmarpc's HELLO (under TLS, ALPN {@code rdmarpc/1} and {@code h2}); a server that answers as an
     * HTTP/2 server is dialled again at once with gRPC over HTTP/2, and its address is remembered for a while, so the
     * channel's next connections to it start with HTTP/2. An rdmarpc server pays no extra round trip.
     */
    AUTO,
    /** rdmarpc's protocol only: a gRPC-over-HTTP/2 server fails the connection with UNAVAILABLE naming the mismatch. */
    RDMARPC,
    /** Standard gRPC over HTTP/2 from the start (prior knowledge in cleartext, ALPN {@code h2} under TLS); never RDMA. */
    GRPC
}
