package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rdmarpc.core.AttachmentCalls;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.WithAttachment;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.transport.rdma.verbs.MemoryRegion;
import dev.rdmarpc.transport.rdma.verbs.RegisteredMemory;
import dev.rdmarpc.transport.rdma.verbs.SendWorkRequest;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A hostile peer that READs an attachment's memory with a key outside what was granted: the rkey of a grant already
 * FINished (a memory window invalidated after its FIN, or the per-grant region deregistered where there are no
 * windows), or the key of the registration the sender's cache keeps over the attachment's pages (local access and
 * window binding only, no remote access).
 * The server's end of the connection plays the peer: the test posts the READ through the verbs on that end's queue
 * pair, with a work request id of that connection that its send path never posted, as a peer replaying an old RTS
 * would. The READ must fail with a remote access error at the hostile end, whose send path fails the connection for
 * it; that connection must close at both ends, another connection must carry on, and slabs, regions, windows, cached
 * registrations and queue pairs must return to baseline.
 */
@Tag("rdma")
class AttachmentGrantAbuseRdmaTest extends RdmaEndToEndBase {
    private static final int LIMIT = 4 << 20;

    @Test
    void aReadWithAFinishedGrantsRkeyFailsAndClosesOnlyThatConnection() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            byte[] bytes = Bytes.pattern(1 << 20, 7);
            MemorySegment attachment = arena.allocate(bytes.length, 4096);
            MemorySegment.copy(bytes, 0, attachment, ValueLayout.JAVA_BYTE, 0, bytes.length);
            abuse(attachment, bytes, honest -> {
                // with windows the grant's key is the one its window carried when the FIN invalidated it; without,
                // each grant's region is deregistered at its FIN and only the peer it was sent to learnt its key
                assumeTrue(honest.context.useWindows(), "the device binds no memory windows: no finished grant's key to replay");
                int[] keys = honest.send.grants().windowKeys();
                assertTrue(keys.length > 0, "a window served the attachment's grant");
                log("the honest end's window keys: " + java.util.Arrays.stream(keys).mapToObj(Integer::toHexString).toList());
                // the call is over: every window is idle, and its key is that of the last grant it served
                return new long[]{attachment.address(), keys[0] & 0xffffffffL};
            });
        }
    }

    @Test
    void aReadThroughTheCachedRegistrationsOwnKeyFailsAndClosesOnlyThatConnection() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            byte[] bytes = Bytes.pattern(1 << 20, 9);
            MemorySegment attachment = arena.allocate(bytes.length, 4096);
            MemorySegment.copy(bytes, 0, attachment, ValueLayout.JAVA_BYTE, 0, bytes.length);
            abuse(attachment, bytes, honest -> {
                List<RegistrationCache.Entry<MemoryRegion>> cached = honest.send.grants().registrations().cached();
                // without memory windows every grant is a region of its own, and nothing is cached
                assumeTrue(honest.context.useWindows(), "the device binds no memory windows: no cached registration");
                assertFalse(cached.isEmpty(), "windows keep the attachment's registration cached");
                MemoryRegion mr = cached.getFirst().registration();
                return new long[]{mr.address(), mr.rkey() & 0xffffffffL};
            });
        }
    }

    /**
     * Sends {@code attachment} on a fresh connection and echoes it back; then the server's end of that connection
     * READs 4 KiB at the address and under the rkey {@code target} picks from the client's (honest) end.
     */
    private void abuse(MemorySegment attachment, byte[] expected, Function<RdmaEndpoint, long[]> target) throws Exception {
        startServer(b -> b.addService(AttachmentsRdmaTest.attachEcho()).maxInboundAttachmentSize(LIMIT));
        RpcChannel good = channel();
        byte[] req = Bytes.pattern(200_000, 3);
        assertEquals(-1, Bytes.mismatch(req, echo(good, req, 30_000)));
        assertRdma(good);
        Set<RdmaEndpoint> known = new HashSet<>(RdmaTests.context().endpoints());
        RpcChannel victim = channel(b -> b.maxInboundAttachmentSize(LIMIT));
        AttachmentsRdmaTest.Collect call = new AttachmentsRdmaTest.Collect();
        ClientCalls.asyncUnaryCall(AttachmentCalls.client(victim.newCall(AttachmentsRdmaTest.ECHO, CallOptions.DEFAULT)),
                WithAttachment.of(new byte[]{1}, attachment, null), call);
        assertNull(call.await());
        assertArrayEquals(expected, call.attachments.getFirst());
        assertRdma(victim);
        List<RdmaEndpoint> all = RdmaTests.context().endpoints();
        RdmaEndpoint honest = Endpoints.newClientEnd(all, known, server.getPort());
        RdmaEndpoint hostile = Endpoints.serverEndOf(honest, all);
        long[] where = target.apply(honest);
        assertEquals(2, server.connectionCount());
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        SlabBuffer destination = SlabPool.shared().allocate(4096);
        try (RdmaTests.LogCapture logs = new RdmaTests.LogCapture()) {
            log("hostile READ of 4096 B at 0x" + Long.toHexString(where[0]) + " rkey 0x" + Long.toHexString(where[1]));
            postRead(hostile, where[0], (int) where[1], destination);
            RdmaTests.await(20_000, () -> !hostile.isOpen() && !honest.isOpen(),
                    () -> "both ends of the abused connection closed: hostile " + hostile.isOpen() + ", honest " + honest.isOpen());
            RdmaTests.await(10_000, () -> logs.contains("IBV_WC_REM_ACCESS_ERR"),
                    () -> "the hostile end's READ failed with a remote access error: " + logs.messages());
            log("abused connection closed: " + logs.messages().stream().filter(m -> m.contains("IBV_WC_REM_ACCESS_ERR"))
                    .findFirst().orElse("?") + "; " + RdmaMetrics.snapshot().minus(before));
        }
        RdmaTests.await(20_000, () -> server.connectionCount() == 1,
                () -> "the server dropped the abused connection: " + server.connectionCount() + " connections");
        assertEquals(-1, Bytes.mismatch(req, echo(good, req, 30_000)), "the other connection carries on");
        assertRdma(good);
        RdmaTests.await(20_000, () -> RdmaMetrics.snapshot().connections() == 2,
                () -> "both ends of the abused RDMA connection are torn down: " + RdmaMetrics.snapshot().connections());
        destination.release(); // its queue pair is destroyed: nothing writes into it any more
    }

    /**
     * Posts an RDMA READ of 4 KiB at {@code remoteAddress} under {@code rkey} into {@code destination} straight on
     * {@code hostile}'s queue pair, signaled, with a work request id of that connection far from any its send path
     * posts (a test connection posts a few thousand at most), so that the error completion reaches the send path as
     * one of a work request it never posted.
     */
    private static void postRead(RdmaEndpoint hostile, long remoteAddress, int rkey, SlabBuffer destination) {
        try (Arena arena = Arena.ofConfined()) {
            SendWorkRequest wr = new SendWorkRequest(arena, 1);
            RegisteredMemory mr = MemoryRegistry.registered(destination, hostile.context.registry().device());
            wr.clear().wrId(((long) hostile.id << 32) | FOREIGN_SEQUENCE).opcode(SendWorkRequest.OPCODE_RDMA_READ)
                    .flags(SendWorkRequest.FLAG_SIGNALED).remote(remoteAddress, rkey)
                    .sge(0, destination.address(), 4096, mr.lkey());
            assertEquals(0, hostile.qp.tryPostSend(wr), "ibv_post_send of the hostile READ");
        }
    }

    /** The low half of the hostile READ's work request id: a sequence number its send path never reaches in a test. */
    private static final long FOREIGN_SEQUENCE = 0x4000_0000L;
}
