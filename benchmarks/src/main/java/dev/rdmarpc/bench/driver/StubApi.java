package dev.rdmarpc.bench.driver;

import java.io.IOException;

/**
 * What differs between grpc-java's and rdmarpc's generated API for the benchmark: how a channel and
 * its stub are built and closed, and how the service is bound into a server.
 */
interface StubApi {

    /** Builds a channel to the settings' server (it connects on its first call). */
    StubChannel open(ClientSettings s);

    /** Starts a server of the benchmark service. */
    BenchServer serve(ServerSettings s) throws IOException;
}
