package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServerCallHandler;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.connection.ConnectionSettings;
import dev.rdmarpc.core.internal.exec.RpcExecutors;
import dev.rdmarpc.core.internal.server.ServerConnection;
import dev.rdmarpc.core.internal.server.ServerImpl;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static dev.rdmarpc.core.internal.call.StreamFrames.BIDI;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A server call gives its flow-control parts back to its connection once onCancel or onComplete is chosen, and the
 * next call on that connection takes them: events that reach the old call afterwards (late frames, WINDOW, request,
 * the handler still sending) must leave the new call alone.
 */
class ServerStreamRecyclingTest {
    private final SlabPool pool = new SlabPool(0, true);
    private final FakeTransports.Server transport = new FakeTransports.Server(pool);
    private ServerImpl server;
    private final BlockingQueue<ServerCall<String, String>> calls = new LinkedBlockingQueue<>();
    private final BlockingQueue<String> events = new LinkedBlockingQueue<>();

    @AfterEach
    void noLeaks() {
        if (server != null) {
            server.shutdownNow();
        }
        Await.until(() -> pool.inUseBuffers() == 0, pool::describeLiveBuffers);
    }

    private FakeConnection start() throws Exception {
        ConnectionSettings settings = FakeTransports.settings(pool);
        ServerCallHandler<String, String> handler = (call, headers) -> {
            calls.add(call);
            call.request(5);
            return new ServerCall.Listener<>() {
                @Override
                public void onMessage(String message) {
                    events.add("message:" + message);
                    call.sendHeaders(new Metadata());
                    call.sendMessage("re:" + message);
                    call.close(Status.OK, new Metadata());
                }

                @Override
                public void onCancel() {
                    events.add("cancel");
                }

                @Override
                public void onComplete() {
                    events.add("complete");
                }
            };
        };
        ServiceDefinition service = ServiceDefinition.builder("test.S").addMethod(BIDI, handler).build();
        server = new ServerImpl(new InetSocketAddress("127.0.0.1", 0), List.of(service), transport, settings,
                RpcExecutors.direct(), null, 20_000);
        server.start();
        FakeConnection c = transport.acceptGreeted();
        return c;
    }

    private ServerStream<String, String> nextCall() throws InterruptedException {
        ServerCall<String, String> call = calls.poll(60, TimeUnit.SECONDS);
        assertNotNull(call, "the handler did not start");
        return (ServerStream<String, String>) call;
    }

    @Test
    void lateEventsForARecycledCallDoNotReachTheCallThatTookItsParts() throws Exception {
        FakeConnection c = start();
        c.deliver(StreamFrames.requestHeaders(pool, 1, BIDI, false, 0));
        ServerStream<String, String> first = nextCall();
        StreamParts parts = ((ServerConnection) first.getConnection()).parts;
        c.deliver(Frames.cancel(pool, 1, Status.CANCELLED.withDescription("client gave up")));
        Await.until(() -> events.contains("cancel"), () -> "events: " + events);
        assertEquals(1, parts.idleInbound(), "onCancel gave the reassembler back");
        assertEquals(1, parts.idleOutbound(), "onCancel gave the send side back");

        c.deliver(StreamFrames.requestHeaders(pool, 3, BIDI, false, 0));
        ServerStream<String, String> second = nextCall();
        assertEquals(0, parts.idleInbound(), "the next call took the recycled reassembler");
        assertEquals(0, parts.idleOutbound(), "the next call took the recycled send side");

        // everything that can still reach the old call object: none may touch the parts it gave back
        MemorySegment late = MemorySegment.ofArray(StreamFrames.message(1, "late", 0));
        first.onMessageFrame(1, FrameHeader.flags(late, 0), late, null, FrameHeader.SIZE, (int) late.byteSize() - FrameHeader.SIZE);
        first.onWindow(1, 1000);
        first.onConnectionWritable();
        first.request(2);
        assertFalse(first.isReady());
        first.sendMessage("from a handler that did not notice the cancel");
        first.close(Status.OK, new Metadata());
        c.deliver(StreamFrames.message(1, "late by id", FrameFlags.END_STREAM));

        c.deliver(StreamFrames.message(3, "hi", FrameFlags.END_STREAM));
        FakeConnection.Sent headers = c.next();
        assertEquals(FrameType.HEADERS, headers.type());
        assertEquals(3, headers.streamId());
        FakeConnection.Sent message = c.next();
        assertEquals(FrameType.MESSAGE, message.type());
        assertEquals(3, message.streamId());
        assertEquals("re:hi", StreamFrames.text(message), "the new call answered its own request only");
        FakeConnection.Sent trailers = c.next();
        assertEquals(FrameType.TRAILERS, trailers.type());
        assertEquals(3, trailers.streamId());
        Await.until(() -> events.contains("complete"), () -> "events: " + events);
        assertEquals(List.of("cancel", "message:hi", "complete"), List.copyOf(events));
        assertEquals(ServerStream.State.CANCELLED, first.state());
        assertEquals(ServerStream.State.CLOSED, second.state());
        assertTrue(c.isOpen(), "late frames for a cancelled stream are dropped, not a protocol error");
        assertEquals(1, parts.idleInbound(), "the second call gave the same reassembler back once");
    }
}
