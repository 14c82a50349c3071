package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.CallExecutors;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServerCallHandler;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.connection.ConnectionSettings;
import dev.rdmarpc.core.internal.exec.CallbackLane;
import dev.rdmarpc.core.internal.exec.CallbackLanes;
import dev.rdmarpc.core.internal.exec.RpcExecutors;
import dev.rdmarpc.core.internal.server.ServerImpl;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.rdmarpc.core.internal.call.StreamFrames.UNARY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A read burst holds the wake-up of the shared default executor even on a connection whose own executor is direct:
 * what a layer above hands that executor from inside the burst (grpc-compat's grpc calls, from their stream listeners)
 * goes to a worker once, at the burst's end.
 */
class ReadBurstHoldTest {
    private final SlabPool pool = new SlabPool(0, true);
    private final FakeTransports.Server transport = new FakeTransports.Server(pool);
    private ServerImpl server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.shutdownNow();
        }
        Await.until(() -> pool.inUseBuffers() == 0, pool::describeLiveBuffers);
    }

    @Test
    void runsHandedToTheSharedExecutorInABurstOfADirectConnectionStartAtTheBurstsEnd() throws Exception {
        CountDownLatch handedOffRan = new CountDownLatch(1);
        ServerCallHandler<String, String> handler = (call, headers) -> {
            call.request(1);
            return new ServerCall.Listener<>() {
                @Override
                public void onMessage(String message) {
                    CallExecutors.shared().execute(handedOffRan::countDown); // as grpc hands its listener off
                    call.sendHeaders(new Metadata());
                    call.sendMessage(message);
                    call.close(Status.OK, new Metadata());
                }
            };
        };
        ConnectionSettings settings = FakeTransports.settings(pool);
        server = new ServerImpl(new InetSocketAddress("127.0.0.1", 0),
                List.of(ServiceDefinition.builder("test.S").addMethod(UNARY, handler).build()), transport, settings,
                RpcExecutors.direct(), null, 20_000);
        server.start();

        // a thread of its own plays the I/O thread, so its lane of the shared executor is fresh: no worker exists
        // until the lane wakes one, and a held lane wakes none
        CompletableFuture<String> outcome = new CompletableFuture<>();
        Thread io = Thread.ofPlatform().name("fake-io").start(() -> {
            try {
                FakeConnection c = transport.acceptGreeted();
                CallbackLane lane = RpcExecutors.sharedCallbacks().holdWakes();
                lane.releaseWakes();
                c.readBurst(() -> {
                    c.deliver(StreamFrames.requestHeaders(pool, 1, UNARY, false, 0));
                    c.deliver(StreamFrames.message(1, "hi", FrameFlags.END_STREAM));
                    assertEquals(1, handedOffRan.getCount(), "the run handed off within the burst has not started");
                    assertTrue(CallbackLanes.isIdle(lane), "no worker was woken within the burst");
                });
                assertTrue(handedOffRan.await(60, TimeUnit.SECONDS), "the run started at the burst's end");
                assertEquals(FrameType.HEADERS, c.next().type());
                outcome.complete("ok");
            } catch (Throwable t) {
                outcome.completeExceptionally(t);
            }
        });
        assertEquals("ok", outcome.get(120, TimeUnit.SECONDS));
        io.join();
    }
}
