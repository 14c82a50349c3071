package dev.rdmarpc.bench.driver;

import java.io.IOException;

/**
 * A client of one API calling a server of another, as a mixed fleet pairs them (e.g. a stock grpc-java client and an
 * rdmarpc server speaking gRPC over HTTP/2): channels come from {@code client}, the server from {@code server}.
 */
record Pairing(StubApi client, StubApi server) implements StubApi {
    @Override
    public StubChannel open(ClientSettings s) {
        return client.open(s);
    }

    @Override
    public BenchServer serve(ServerSettings s) throws IOException {
        return server.serve(s);
    }
}
