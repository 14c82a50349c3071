package dev.rdmarpc.bench.driver;

/** A running benchmark server of one transport. */
public interface BenchServer extends AutoCloseable {

    /** The port it listens on. */
    int port();

    /** Stops it and frees its threads; waits a few seconds at most. */
    @Override
    void close();
}
