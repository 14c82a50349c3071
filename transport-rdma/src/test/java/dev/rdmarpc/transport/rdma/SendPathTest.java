package dev.rdmarpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.buffer.Slab;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabListener;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.transport.rdma.FakeQueuePair.Post;
import dev.rdmarpc.transport.rdma.verbs.RegisteredMemory;
import dev.rdmarpc.transport.rdma.verbs.SendWorkRequest;
import dev.rdmarpc.transport.rdma.verbs.WorkCompletion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The send side against a fake queue pair (no device): credits run out and come back, the last credit waits for a
 * SEND that returns credits, a full send queue waits for completions that free slots in order, small frames are
 * batched until a flush, large ones go from core's slabs without a copy, the receive side's READs stay within their
 * budget, writability follows the bytes waiting, and completions and teardown release every buffer.
 */
class SendPathTest {
    private static final int LKEY = 0x5eed;
    private static final int PEER_BUFFER = 8192;
    private static final int MAX_INLINE = 64;

    private final SlabPool pool = new SlabPool(64L << 20, false);
    private final Arena arena = Arena.ofShared();
    private final FakeQueuePair qp = new FakeQueuePair(MAX_INLINE);
    private final Events events = new Events();
    private final long baseline;

    SendPathTest() {
        pool.addListener(new SlabListener() {
            @Override
            public void onSlabAdded(Slab slab) {
                slab.attach((RegisteredMemory) () -> LKEY);
            }

            @Override
            public void onSlabRemoved(Slab slab) {
                slab.attach(null);
            }
        });
        baseline = pool.inUseBuffers();
    }

    /** What the send side told its connection. */
    static final class Events implements SendEvents {
        final List<Throwable> errors = new ArrayList<>();
        int writable;

        @Override
        public void closeOnError(Throwable error) {
            errors.add(error);
        }

        @Override
        public boolean inIoThread() {
            return true;
        }

        @Override
        public void writable() {
            writable++;
        }

        @Override
        public void writableAfterCall() {
            writable++;
        }
    }

    @AfterEach
    void slabsBackToBaseline() {
        assertEquals(List.of(), events.errors);
        assertEquals(baseline, pool.inUseBuffers(), () -> "slab blocks still in use: " + pool.describeLiveBuffers());
        arena.close();
    }

    private SendPath path(int credits, int sqDepth) {
        return new SendPath(events, qp, pool, new RendezvousGrants(null, false), arena, 1, sqDepth, PEER_BUFFER,
                credits, 1 << 20, false, 0);
    }

    /** One MESSAGE frame on stream 1 with {@code payload} bytes of a pattern starting at {@code seed}. */
    private SlabBuffer frame(int payload, int seed) {
        SlabBuffer b = pool.allocate(FrameHeader.SIZE + payload);
        FrameHeader.write(b.segment(), 0, payload, FrameType.MESSAGE, 0, 1, 0);
        for (int i = 0; i < payload; i++) {
            b.segment().set(java.lang.foreign.ValueLayout.JAVA_BYTE, FrameHeader.SIZE + i, (byte) (seed + i));
        }
        return b.setLength(FrameHeader.SIZE + payload);
    }

    private static int creditOf(Post p, int offset) {
        return FrameHeader.credit(MemorySegment.ofArray(p.bytes()), offset);
    }

    /** Completes everything posted, then closes the path the way the poller does. */
    private void close(SendPath sp) {
        if (!qp.posts.isEmpty()) {
            sp.onCompletion(qp.last().seq(), WorkCompletion.STATUS_SUCCESS);
        }
        assertTrue(sp.beginClose());
        Post marker = qp.last();
        assertTrue(qp.inError, "the queue pair went to ERR");
        assertEquals(0, marker.sgeLengths().length, "the drain marker carries nothing");
        assertTrue(marker.signaled());
        assertEquals(SendPath.DRAINED, sp.onCompletion(marker.seq(), WorkCompletion.STATUS_WR_FLUSH_ERR));
        sp.finishClose();
        assertTrue(qp.closed);
    }

    @Test
    void creditsRunOutAndComeBackAndTheLastOneWaitsForASendThatReturnsCredits() {
        SendPath sp = path(4, 64);
        for (int i = 0; i < 6; i++) {
            sp.send(frame(100, i), null, true);
        }
        assertEquals(3, qp.posts(SendWorkRequest.OPCODE_SEND).size(), "4 credits: 3 SENDs, the last credit kept");
        assertEquals(3 * 116, sp.queuedBytes(), "three frames wait for credits");

        sp.onCredits(2);
        assertEquals(5, qp.posts.size(), "two credits back: two more SENDs");
        assertEquals(116, sp.queuedBytes());

        sp.receivesDone(1); // this side now owes one credit: a SEND carrying it may use the last credit
        assertEquals(6, qp.posts.size());
        assertEquals(1, creditOf(qp.last(), 0), "the SEND on the last credit returns the credit owed");
        assertEquals(0, creditOf(qp.posts.get(0), 0));
        assertEquals(0, sp.queuedBytes());

        sp.send(frame(100, 9), null, true);
        assertEquals(6, qp.posts.size(), "no credit left");
        sp.onCredits(3);
        assertEquals(7, qp.posts.size());
        close(sp);
    }

    @Test
    void moreCreditsReturnedThanGrantedAreAProtocolError() {
        SendPath sp = path(4, 64);
        try {
            sp.onCredits(1);
            throw new AssertionError("accepted a fifth credit");
        } catch (dev.rdmarpc.core.protocol.ProtocolException expected) {
            assertTrue(expected.getMessage().contains("more receive credits than it granted"), expected.getMessage());
        }
        close(sp);
    }

    @Test
    void aFullSendQueueWaitsAndCompletionsFreeSlotsInOrder() {
        SendPath sp = path(64, 8);
        for (int i = 0; i < 10; i++) {
            sp.send(frame(500, i), null, true);
        }
        assertEquals(7, qp.posts.size(), "8 slots, one kept for the drain marker");
        for (int i = 0; i < 7; i++) {
            assertEquals(i, qp.posts.get(i).seq(), "slots are numbered in posting order");
            assertTrue(qp.posts.get(i).signaled(), "an eager SEND is signaled: its buffer is released on completion");
        }
        assertEquals(10, pool.inUseBuffers() - baseline, "7 posted and 3 waiting staging buffers");

        assertEquals(0, sp.onCompletion(1, WorkCompletion.STATUS_SUCCESS));
        assertEquals(9, qp.posts.size(), "slots 0 and 1 freed: two more posted");
        assertEquals(8, pool.inUseBuffers() - baseline, "the two completed SENDs' buffers are released");
        assertEquals(0, sp.onCompletion(1, WorkCompletion.STATUS_SUCCESS), "a completion already counted is ignored");
        assertEquals(8, pool.inUseBuffers() - baseline);

        sp.onCompletion(8, WorkCompletion.STATUS_SUCCESS);
        assertEquals(10, qp.posts.size());
        assertEquals(1, pool.inUseBuffers() - baseline, "only the last SEND's buffer is still posted");
        close(sp);
    }

    @Test
    void smallFramesShareOneSendPostedOnFlush() {
        SendPath sp = path(64, 64);
        byte[] expected = new byte[5 * 24];
        for (int i = 0; i < 5; i++) {
            SlabBuffer f = frame(8, i * 10);
            MemorySegment.copy(f.segment(), 0, MemorySegment.ofArray(expected), i * 24L, 24);
            sp.send(f, null, false);
        }
        assertEquals(0, qp.posts.size(), "nothing posted before a flush");
        sp.flush();
        assertEquals(1, qp.posts.size(), "five frames, one SEND");
        Post p = qp.last();
        assertFalse(p.inline(), "120 bytes exceed the 64-byte inline size");
        assertArrayEquals(expected, p.bytes());

        sp.send(frame(8, 1), null, false);
        sp.send(frame(8, 2), null, true);
        Post small = qp.last();
        assertTrue(small.inline(), "48 bytes go inline");
        assertEquals(48, small.bytes().length);
        close(sp);
    }

    @Test
    void aLargeFrameGoesFromCoresSlabsWithoutACopyAndIsReleasedOnCompletion() {
        SendPath sp = path(64, 64);
        SlabBuffer header = pool.allocate(FrameHeader.SIZE);
        FrameHeader.write(header.segment(), 0, 4000, FrameType.MESSAGE, 0, 3, 0);
        header.setLength(FrameHeader.SIZE);
        SlabBuffer payload = pool.allocate(4000);
        payload.setLength(4000);
        long headerAddress = header.address();
        long payloadAddress = payload.address();
        sp.send(header, payload, true);
        Post p = qp.last();
        assertEquals(2, p.sgeAddresses().length, "header and payload as two scatter/gather entries");
        assertEquals(headerAddress, p.sgeAddresses()[0]);
        assertEquals(payloadAddress, p.sgeAddresses()[1]);
        assertEquals(4000, p.sgeLengths()[1]);
        assertEquals(2, pool.inUseBuffers() - baseline, "both buffers stay until the SEND completes");
        sp.onCompletion(p.seq(), WorkCompletion.STATUS_SUCCESS);
        assertEquals(0, pool.inUseBuffers() - baseline);

        SlabBuffer message = pool.allocate(16 << 10);
        SlabBuffer twoFrames = pool.allocate(2 * (FrameHeader.SIZE + 3000));
        for (int i = 0; i < 2; i++) {
            FrameHeader.write(twoFrames.segment(), i * 3016L, 3000, FrameType.MESSAGE, 0, 5, 0);
        }
        twoFrames.setLength(2 * 3016);
        SlabBuffer sliceHeader = pool.allocate(FrameHeader.SIZE);
        FrameHeader.write(sliceHeader.segment(), 0, 5000, FrameType.MESSAGE, 0, 7, 0);
        sliceHeader.setLength(FrameHeader.SIZE);
        SlabBuffer slice = message.retainedSlice(1000, 5000); // core's chunks are slices of one message buffer
        message.release();
        sp.send(sliceHeader, slice, true);
        sp.send(twoFrames, null, true);
        assertEquals(3, qp.posts.size() - 1, "a SEND per large frame");
        assertEquals(slice.address(), qp.posts.get(1).sgeAddresses()[1], "the slice goes as it is");
        assertEquals(twoFrames.address() + 3016 + FrameHeader.SIZE, qp.last().sgeAddresses()[1]);
        sp.onCompletion(qp.last().seq(), WorkCompletion.STATUS_SUCCESS);
        assertEquals(0, pool.inUseBuffers() - baseline, "each reference released once");

        SlabBuffer smallHeader = pool.allocate(FrameHeader.SIZE);
        FrameHeader.write(smallHeader.segment(), 0, 1000, FrameType.MESSAGE, 0, 3, 0);
        smallHeader.setLength(FrameHeader.SIZE);
        SlabBuffer smallPayload = pool.allocate(1000).setLength(1000);
        long smallPayloadAddress = smallPayload.address();
        sp.send(smallHeader, smallPayload, true);
        Post copied = qp.last();
        assertEquals(1, copied.sgeAddresses().length, "a frame under the threshold is copied into a staging buffer");
        assertNotEquals(smallPayloadAddress, copied.sgeAddresses()[0]);
        assertEquals(1016, copied.bytes().length);
        close(sp);
    }

    @Test
    void teardownReleasesWhatWaitsAndWhatIsPosted() {
        SendPath sp = path(4, 64);
        for (int i = 0; i < 6; i++) {
            sp.send(frame(500, i), null, true);
        }
        sp.send(frame(10, 1), null, false); // staged, never flushed
        assertEquals(3, qp.posts.size());
        assertTrue(sp.beginClose());
        assertEquals(3, pool.inUseBuffers() - baseline, "what never went out is freed at once; posted SENDs wait");
        Post marker = qp.last();
        assertEquals(SendPath.DRAINED, sp.onCompletion(marker.seq(), WorkCompletion.STATUS_WR_FLUSH_ERR));
        sp.finishClose();
    }

    @Test
    void writabilityIsLostAboveTheHighMarkAndComesBackAtTheLowMark() {
        SendPath sp = path(4, 64);
        int frames = 0;
        while (sp.isWritable()) {
            sp.send(frame(8000, frames), null, true);
            frames++;
        }
        assertTrue(sp.queuedBytes() > SendPath.HIGH_WATER, "not writable only above the high mark");
        assertTrue(frames * 8000L > SendPath.HIGH_WATER);
        assertEquals(0, events.writable);

        int rounds = 0;
        while (!sp.isWritable()) {
            sp.onCompletion(qp.last().seq(), WorkCompletion.STATUS_SUCCESS);
            sp.onCredits(3); // the peer, which never returned credits, now does
            sp.retry();
            rounds++;
            if (!sp.isWritable()) {
                assertEquals(0, events.writable, "no writable event before the low mark");
                assertTrue(sp.queuedBytes() > SendPath.LOW_WATER);
            }
        }
        assertTrue(rounds > 1);
        assertEquals(1, events.writable, "one writable event");
        assertTrue(sp.queuedBytes() <= SendPath.LOW_WATER);

        while (sp.queuedBytes() > 0) {
            sp.onCompletion(qp.last().seq(), WorkCompletion.STATUS_SUCCESS);
            sp.onCredits(3);
        }
        assertEquals(1, events.writable);
        close(sp);
    }

    private InboundQueue.Item rts(int length, int n) {
        InboundQueue.Item it = new InboundQueue.Item();
        it.kind = InboundQueue.READ;
        it.length = length;
        it.remoteAddress = 0x100000000L * (n + 1);
        it.rkey = 0x700 + n;
        it.token = n + 1;
        it.streamId = 1;
        return it;
    }

    /** What the inbound queue does when core has taken a read frame. */
    private static void deliver(SendPath sp, InboundQueue.Item it) {
        int capacity = it.buffer.capacity();
        it.buffer.release();
        it.buffer = null;
        sp.readDelivered(capacity);
    }

    @Test
    void rtsDestinationsAreAllocatedOnlyWhenTheirReadIsPostedWithinTheReadBudget() {
        SendPath sp = path(64, 256);
        long bytesBefore = pool.inUseBytes();
        List<InboundQueue.Item> items = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            InboundQueue.Item it = rts(1 << 20, i);
            items.add(it);
            sp.startRead(it);
            assertTrue(pool.inUseBytes() - bytesBefore <= RendezvousReads.MAX_READ_BYTES,
                    "in-use slab bytes stay within the read budget while RTSs are pending");
        }
        List<Post> reads = qp.posts(SendWorkRequest.OPCODE_RDMA_READ);
        assertEquals(RendezvousReads.MAX_READ_BYTES >> 20, reads.size(), "4 MiB of 1 MiB READs posted");
        assertEquals(RendezvousReads.MAX_READ_BYTES, pool.inUseBytes() - bytesBefore);
        for (int i = 0; i < reads.size(); i++) {
            assertEquals(items.get(i).remoteAddress, reads.get(i).remoteAddress(), "READs in arrival order");
            assertEquals(items.get(i).rkey, reads.get(i).rkey());
            assertEquals(items.get(i).buffer.address(), reads.get(i).sgeAddresses()[0], "into the destination");
        }
        for (int i = reads.size(); i < items.size(); i++) {
            assertNull(items.get(i).buffer, "a pending RTS holds no destination");
        }

        sp.onCompletion(qp.last().seq(), WorkCompletion.STATUS_SUCCESS);
        assertEquals(4, qp.posts(SendWorkRequest.OPCODE_RDMA_READ).size(),
                "a finished READ still holds its budget until core has the frame");
        int delivered = 0;
        while (delivered < items.size()) {
            InboundQueue.Item it = items.get(delivered);
            assertTrue(it.buffer != null && it.postedBytes == it.length, "the oldest READ was posted");
            sp.onCompletion(qp.last().seq(), WorkCompletion.STATUS_SUCCESS);
            deliver(sp, it);
            delivered++;
            assertEquals(Math.min(items.size(), delivered + 4), qp.posts(SendWorkRequest.OPCODE_RDMA_READ).size(),
                    "each delivery admits the next READ");
            assertTrue(pool.inUseBytes() - bytesBefore <= RendezvousReads.MAX_READ_BYTES);
        }
        assertEquals(0, sp.reads().active());
        close(sp);
    }

    @Test
    void atMostMaxReadsSmallRendezvousAreReadAtOnceAndALargeOneIsReadAlone() {
        SendPath sp = path(64, 256);
        List<InboundQueue.Item> items = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            items.add(rts(64 << 10, i));
            sp.startRead(items.getLast());
        }
        InboundQueue.Item large = rts(6 << 20, 99);
        sp.startRead(large);
        assertEquals(RendezvousReads.MAX_READS, qp.posts(SendWorkRequest.OPCODE_RDMA_READ).size());
        for (InboundQueue.Item it : items) {
            sp.onCompletion(qp.last().seq(), WorkCompletion.STATUS_SUCCESS);
            if (it.buffer == null) {
                throw new AssertionError("READs are admitted in order");
            }
            deliver(sp, it);
        }
        assertTrue(large.buffer != null, "a rendezvous larger than the byte budget is read once nothing else is held");
        assertEquals(1, sp.reads().active());
        sp.onCompletion(qp.last().seq(), WorkCompletion.STATUS_SUCCESS);
        deliver(sp, large);
        close(sp);
    }

    @Test
    void aPendingRtsKeepsItsReceiveBufferAndCreditUntilItsReadIsPosted() {
        SendPath sp = path(4, 256);
        List<InboundQueue.Item> items = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            InboundQueue.Item it = rts(1 << 20, i);
            items.add(it);
            sp.startRead(it);
            if (it.buffer == null) {
                it.receiveBuffer = pool.allocate(PEER_BUFFER); // what ReceivePath keeps for a pending RTS
                it.hold = sp.reads().holds().open(); // and the hold on its SEND, the RTS's alone once handled
            }
        }
        assertEquals(2, items.stream().filter(it -> it.receiveBuffer != null).count());
        assertEquals(0, qp.posts(SendWorkRequest.OPCODE_SEND).size());
        sp.onCompletion(qp.last().seq(), WorkCompletion.STATUS_SUCCESS);
        deliver(sp, items.get(0));
        assertNull(items.get(4).receiveBuffer, "its READ was posted: the receive buffer is given back");
        assertEquals(0, qp.posts(SendWorkRequest.OPCODE_SEND).size(), "one credit owed is not yet worth a SEND");
        deliver(sp, items.get(1));
        List<Post> sends = qp.posts(SendWorkRequest.OPCODE_SEND);
        assertEquals(1, sends.size(), "two credits owed (half the grant): a credit frame goes");
        Post credit = sends.getFirst();
        MemorySegment s = MemorySegment.ofArray(credit.bytes());
        assertEquals(FrameType.WINDOW, FrameHeader.type(s, 0));
        assertEquals(0, FrameHeader.streamId(s, 0));
        assertEquals(2, FrameHeader.credit(s, 0));
        for (int i = 2; i < items.size(); i++) {
            sp.onCompletion(qp.last().seq(), WorkCompletion.STATUS_SUCCESS);
            deliver(sp, items.get(i));
        }
        assertEquals(0, sp.reads().holds().held(), "no SEND is held once every READ was posted");
        close(sp);
    }

    @Test
    void anErrorOnAWorkRequestThePathNeverPostedFailsTheConnectionAndOtherStrayCompletionsAreIgnored() {
        SendPath sp = path(4, 64);
        sp.send(frame(100, 1), null, true);
        int stray = qp.last().seq() + (1 << 30); // far from anything the path posted
        assertEquals(0, sp.onCompletion(stray, WorkCompletion.STATUS_SUCCESS));
        assertEquals(0, sp.onCompletion(stray, WorkCompletion.STATUS_WR_FLUSH_ERR));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> sp.onCompletion(stray, WorkCompletion.STATUS_REM_ACCESS_ERR));
        assertTrue(e.getMessage().contains("IBV_WC_REM_ACCESS_ERR on a work request this connection did not post"), e.getMessage());
        close(sp);
    }
}
