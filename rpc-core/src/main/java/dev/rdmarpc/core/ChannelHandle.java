package dev.rdmarpc.core;

import dev.rdmarpc.core.internal.channel.ChannelImpl;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** What {@link RpcChannel} and {@link RpcConnection} share: the ping and the lifecycle of the client they front. */
abstract class ChannelHandle implements Channel {
    final ChannelImpl impl;

    ChannelHandle(ChannelImpl impl) {
        this.impl = impl;
    }

    @Override
    public String authority() {
        return impl.authority();
    }

    /**
     * Measures the round trip to the server with a PING frame: the future completes with the time in nanoseconds, or
     * fails with a {@link StatusException} (UNAVAILABLE) when the server cannot be reached or the connection goes away
     * before the answer. A channel connects first if needed; after {@link #shutdown()} it still pings the connection
     * while calls finish on it.
     */
    public CompletableFuture<Long> ping() {
        return impl.ping();
    }

    /** Lets calls in flight finish, refuses new ones, then closes the connection. */
    public void shutdown() {
        impl.shutdown();
    }

    /** Fails every call in flight with UNAVAILABLE and closes the connection now. */
    public void shutdownNow() {
        impl.shutdownNow();
    }

    /** Whether {@link #shutdown()} or {@link #shutdownNow()} was called. */
    public boolean isShutdown() {
        return impl.isShutdown();
    }

    /** Whether it is shut down and its connection closed. */
    public boolean isTerminated() {
        return impl.isTerminated();
    }

    /** Waits until it is terminated or the timeout passes; returns whether it is terminated. */
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return impl.awaitTermination(timeout, unit);
    }
}
