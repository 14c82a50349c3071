package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.Status;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A message that arrives whole in one frame is parsed from the buffer the NIC placed it in: a rendezvous
 * destination, or a shared-receive-queue buffer it fills at least half of. No slab-to-slab copy is made for them
 * (read from the kept/copied counters); smaller messages, and messages split over several frames, are copied once as
 * before. Keeping receive buffers costs memory only: a reader that stops reading does not hold the peer's credits.
 */
@Tag("rdma")
class KeptReceiveBuffersRdmaTest extends RdmaEndToEndBase {

    /** Counts of MESSAGE frames core kept or copied, and of rendezvous READs, since {@link #of()}. */
    private record Counts(long kept, long copied, long reads) {
        static Counts of() {
            return new Counts(RdmaMetrics.MESSAGE_FRAMES_KEPT.sum(), RdmaMetrics.MESSAGE_FRAMES_COPIED.sum(),
                    RdmaMetrics.RENDEZVOUS_READS.sum());
        }

        Counts since(Counts before) {
            return new Counts(kept - before.kept, copied - before.copied, reads - before.reads);
        }
    }

    private static int receiveBufferSize() {
        return RdmaTests.context().config().receiveBufferSize();
    }

    /** One echo of {@code size} bytes (a request and a response message); returns what it counted. */
    private static Counts echoCounting(RpcChannel ch, int size, int seed) {
        Counts before = Counts.of();
        byte[] req = Bytes.pattern(size, seed);
        byte[] resp = echo(ch, req, 60_000);
        assertEquals(req.length, resp.length, "echo of " + size + " bytes");
        assertEquals(-1, Bytes.mismatch(req, resp), "content of the echo of " + size + " bytes, byte for byte");
        Counts d = Counts.of().since(before);
        log("echo of " + size + " B: " + d);
        return d;
    }

    @Test
    void wholeMessagesAreParsedWhereTheyLandedAndSmallOnesCopiedOnce() throws Exception {
        startServer();
        RpcChannel ch = channel();
        echo(ch, new byte[1], 30_000);
        assertRdma(ch);
        int buffer = receiveBufferSize();

        // by rendezvous, one frame each: the READ destination becomes the message's buffer
        for (int size : new int[] {(1 << 20) - 4, 512 << 10, 100_000}) {
            Counts d = echoCounting(ch, size, size);
            assertEquals(2, d.reads(), "request and response by rendezvous: " + d);
            assertEquals(2, d.kept(), "both kept in their READ destination: " + d);
            assertEquals(0, d.copied(), "no MESSAGE frame copied: " + d);
        }
        // by eager SEND, filling at least half of the receive buffer: the SRQ buffer becomes the message's buffer
        for (int size : new int[] {buffer / 2 - 4, buffer * 3 / 4, buffer - 200}) {
            Counts d = echoCounting(ch, size, size);
            assertEquals(0, d.reads(), "eager, no rendezvous: " + d);
            assertEquals(2, d.kept(), "both kept in their receive buffer: " + d);
            assertEquals(0, d.copied(), "no MESSAGE frame copied: " + d);
        }
        // less than half of a receive buffer: copied out of it, so it goes back to the SRQ at once
        for (int size : new int[] {0, 64, 2000, buffer / 2 - 5}) {
            Counts d = echoCounting(ch, size, size);
            assertEquals(0, d.kept(), "small messages are not kept: " + d);
            assertEquals(2, d.copied(), "each copied once: " + d);
        }
        // exactly 1 MiB fits a frame of the default 1 MiB maximum only without its length prefix: the prefix goes
        // alone in a BEGIN frame (no message bytes, nothing to keep), the message's bytes whole in the next frame
        Counts d = echoCounting(ch, 1 << 20, 3);
        assertEquals(2, d.reads(), "one rendezvous each way: " + d);
        assertEquals(2, d.kept(), "both kept in their READ destination: " + d);
        assertEquals(2, d.copied(), "only the prefix-only BEGIN frames are not kept: " + d);
        // a byte more does not fit one frame at all: two frames per message, reassembled by copy
        d = echoCounting(ch, (1 << 20) + 1, 3);
        assertEquals(0, d.kept(), "a message split over frames is not kept: " + d);
        assertEquals(4, d.copied(), "two frames each way, copied: " + d);
    }

    @Test
    void aReaderThatStopsReadingHoldsBuffersButNotTheConnectionsCredits() throws Exception {
        startServer();
        RpcChannel ch = channel();
        echo(ch, new byte[1], 30_000);
        assertRdma(ch);
        int size = receiveBufferSize() * 3 / 4;
        int credits = RdmaTests.context().config().credits();
        int count = Math.max(200, 4 * credits);
        assertTrue((long) count * (size + 4) < 2 << 20, "all of them fit the streams' default windows");

        Counts before = Counts.of();
        List<byte[]> received = new CopyOnWriteArrayList<>();
        CompletableFuture<Status> closed = new CompletableFuture<>();
        ClientCall<byte[], byte[]> call = ch.newCall(EchoService.CHAT,
                CallOptions.DEFAULT.withDeadlineAfter(RdmaTests.timeout(300_000), TimeUnit.MILLISECONDS));
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onMessage(byte[] message) {
                received.add(message);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
            }
        }, new Metadata());
        for (int i = 0; i < count; i++) {
            call.sendMessage(Bytes.pattern(size, 1000 + i));
        }
        // no request(): every answer stays queued in the receive buffer it arrived in
        RdmaTests.await(120_000, () -> Counts.of().since(before).kept() >= 2L * count,
                () -> "all " + count + " messages and their answers kept: " + Counts.of().since(before));
        assertEquals(0, received.size(), "nothing delivered before it was asked for");
        log(count + " answers of " + size + " B kept unread, " + credits + " credits per connection: "
                + Counts.of().since(before));

        // more receive buffers are held than the peer has credits: the connection still carries other calls
        for (int i = 0; i < 3; i++) {
            Counts d = echoCounting(ch, size, i);
            assertEquals(2, d.kept(), "the echo's messages kept too: " + d);
        }

        call.request(count / 2);
        RdmaTests.await(60_000, () -> received.size() == count / 2, () -> "read " + received.size() + " of " + count / 2);
        for (int i = 0; i < count / 2; i++) {
            byte[] expected = Bytes.pattern(size, 1000 + i);
            for (int k = 0; k < expected.length; k++) {
                expected[k] = (byte) ~expected[k];
            }
            assertEquals(-1, Bytes.mismatch(expected, received.get(i)), "answer " + i);
        }
        // the other half is dropped with the call: their receive buffers go back to the pool (checked after the test)
        call.cancel("read enough", null);
        assertEquals(Status.Code.CANCELLED, closed.get(RdmaTests.timeout(60_000), TimeUnit.MILLISECONDS).getCode());
    }
}
