package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.channel.ChannelImpl;
import dev.rdmarpc.core.internal.channel.ClientConnection;
import dev.rdmarpc.core.internal.exec.RpcExecutors;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static dev.rdmarpc.core.internal.call.StreamFrames.BIDI;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client call gives its flow-control parts back to the channel once onClose is chosen, and the next call takes
 * them: events that reach the old call afterwards (late frames, WINDOW, request, cancel) must leave the new call alone.
 */
class ClientStreamRecyclingTest {
    private final SlabPool pool = new SlabPool(0, true);
    private final FakeTransports.Client transport = new FakeTransports.Client(pool);
    private ChannelImpl channel;

    @AfterEach
    void noLeaks() {
        if (channel != null) {
            channel.shutdownNow();
        }
        Await.until(() -> pool.inUseBuffers() == 0, pool::describeLiveBuffers);
    }

    private FakeConnection connect() throws InterruptedException {
        return transport.takeGreeted();
    }

    /** Hands a whole MESSAGE frame straight to a stream, as the connection would for its id. */
    private static void messageFrame(ClientStream<?, ?> stream, ClientConnection from, int streamId, String text) {
        MemorySegment frame = MemorySegment.ofArray(StreamFrames.message(streamId, text, 0));
        stream.onMessageFrame(from, streamId, FrameHeader.flags(frame, 0), frame, null, FrameHeader.SIZE, (int) frame.byteSize() - FrameHeader.SIZE);
    }

    @Test
    void lateEventsForARecycledCallDoNotReachTheCallThatTookItsParts() throws Exception {
        channel = transport.channel(RpcExecutors.direct());
        assertEquals(0, channel.parts().idleInbound());

        ClientStream<String, String> first = (ClientStream<String, String>) channel.newCall(BIDI, CallOptions.DEFAULT);
        ClientStreamStatesTest.Recorder firstEvents = new ClientStreamStatesTest.Recorder();
        first.start(firstEvents, new Metadata());
        first.request(5);
        FakeConnection c = connect();
        int firstId = c.next(FrameType.HEADERS).streamId();
        first.cancel("done with it", null);
        assertEquals(FrameType.CANCEL, c.next().type());
        assertEquals(Status.Code.CANCELLED, firstEvents.closed.get(60, TimeUnit.SECONDS).getCode());
        assertEquals(1, channel.parts().idleInbound(), "onClose gave the reassembler back");
        assertEquals(1, channel.parts().idleOutbound(), "onClose gave the send side back");

        ClientStream<String, String> second = (ClientStream<String, String>) channel.newCall(BIDI, CallOptions.DEFAULT);
        assertEquals(0, channel.parts().idleInbound(), "the next call took the recycled reassembler");
        assertEquals(0, channel.parts().idleOutbound(), "the next call took the recycled send side");
        ClientStreamStatesTest.Recorder secondEvents = new ClientStreamStatesTest.Recorder();
        second.start(secondEvents, new Metadata());
        second.request(5);
        int secondId = c.next(FrameType.HEADERS).streamId();
        assertTrue(secondId != firstId);

        // everything that can still reach the old call object: none may touch the parts it gave back
        ClientConnection cc = channel.connection().get(60, TimeUnit.SECONDS);
        messageFrame(first, cc, firstId, "late for the first call");
        first.onWindow(cc, firstId, 1000);
        first.onConnectionWritable(cc);
        first.request(3);
        first.cancel("again", null);
        assertFalse(first.isReady());
        c.deliver(StreamFrames.message(firstId, "late by id", 0));

        c.deliver(Frames.responseHeaders(pool, secondId, new Metadata()));
        c.deliver(StreamFrames.message(secondId, "for the second call", 0));
        c.deliver(StreamFrames.trailers(pool, secondId, Status.OK));
        assertEquals(Status.Code.OK, secondEvents.closed.get(60, TimeUnit.SECONDS).getCode());
        assertEquals(List.of("headers", "message:for the second call", "close:OK"), secondEvents.all(),
                "the new call saw its own frames only");
        assertEquals(List.of("close:CANCELLED"), firstEvents.all(), "the old call stayed closed");
        assertTrue(c.isOpen(), "late frames for a closed stream are dropped, not a protocol error");
        assertEquals(1, channel.parts().idleInbound(), "the second call gave the same parts back once");
        assertSame(ClientStream.State.CLOSED, first.state());
    }
}
