package dev.rdmarpc.grpc;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The same semantics with grpc's {@code directExecutor()} on both sides: application callbacks run
 * on whatever thread the transport delivers on, so they must never run under an rdmarpc call's
 * lock. Plus a relay between two calls, each one's callback sending on the other, the pattern that
 * deadlocks if callbacks run under a call's lock (each call on its own connection and I/O thread).
 */
class SemanticsDirectExecutorTest extends SemanticsTest {
    @Override
    RdmaServerBuilder configure(RdmaServerBuilder b) {
        return b.directExecutor();
    }

    @Override
    RdmaChannelBuilder configure(RdmaChannelBuilder b) {
        return b.directExecutor();
    }

    @Test
    void relayBetweenTwoCallsDoesNotDeadlock() throws Exception {
        int rounds = 2000;
        CountDownLatch done = new CountDownLatch(2);
        AtomicInteger relayed = new AtomicInteger();
        AtomicInteger finished = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        // two channels: two connections, each delivering on its own I/O thread
        io.grpc.ManagedChannel second = configure(RdmaChannelBuilder.forAddress("127.0.0.1", server.getPort())
                .transportMode(dev.rdmarpc.core.TransportMode.TCP)).build();
        ClientCall<String, String> a = channel.newCall(ECHO_STREAM, CallOptions.DEFAULT);
        ClientCall<String, String> b = second.newCall(ECHO_STREAM, CallOptions.DEFAULT);
        class Relay extends ClientCall.Listener<String> {
            final ClientCall<String, String> other;
            final ClientCall<String, String> self;

            Relay(ClientCall<String, String> self, ClientCall<String, String> other) {
                this.self = self;
                this.other = other;
            }

            @Override
            public void onMessage(String message) {
                int n = Integer.parseInt(message);
                relayed.incrementAndGet();
                if (n < rounds) {
                    synchronized (other) { // the application's own lock, held while sending on the other call
                        other.sendMessage(Integer.toString(n + 1));
                    }
                } else if (finished.incrementAndGet() == 2) {
                    // both counters are through: until then the other one may still be relayed on either call (the
                    // two can be a step apart, depending on which first message reached the echo first)
                    synchronized (self) {
                        self.halfClose();
                    }
                    synchronized (other) {
                        other.halfClose();
                    }
                }
                self.request(1);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                if (!status.isOk()) {
                    failure.compareAndSet(null, status.asRuntimeException());
                }
                done.countDown();
            }
        }
        a.start(new Relay(a, b), new Metadata());
        b.start(new Relay(b, a), new Metadata());
        a.request(1);
        b.request(1);
        // both directions at once, from two application threads holding their own locks
        Thread t1 = new Thread(() -> {
            synchronized (a) {
                a.sendMessage("0");
            }
        });
        Thread t2 = new Thread(() -> {
            synchronized (b) {
                b.sendMessage("0");
            }
        });
        t1.start();
        t2.start();
        try {
            assertTrue(done.await(60, TimeUnit.SECONDS), "relay stalled after " + relayed.get() + " messages");
            assertNull(failure.get());
            assertEquals(2 * (rounds + 1), relayed.get());
        } finally {
            second.shutdownNow();
        }
    }
}
