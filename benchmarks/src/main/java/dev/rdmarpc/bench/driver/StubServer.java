package dev.rdmarpc.bench.driver;

import java.util.concurrent.TimeUnit;

/** A started server of a generated API (grpc-java's or rdmarpc's), stopped the same way for both. */
final class StubServer implements BenchServer {
    /** Shuts a server down now and waits for it to terminate; false when the time ran out. */
    interface Stopper {
        boolean stop(long timeout, TimeUnit unit) throws InterruptedException;
    }

    private final int port;
    private final Stopper stopper;

    StubServer(int port, Stopper stopper) {
        this.port = port;
        this.stopper = stopper;
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public void close() {
        try {
            stopper.stop(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
