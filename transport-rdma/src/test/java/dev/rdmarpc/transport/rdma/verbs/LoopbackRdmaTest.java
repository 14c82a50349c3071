package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.log;
import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.timeout;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Two RC QPs in one process, one PD, sharing a CQ and an SRQ, connected to each other: inline SEND, gathered
 * SEND from registered memory, SEND_WITH_IMM and a 1 MiB RDMA READ, with completions in event mode.
 */
@Tag("rdma")
class LoopbackRdmaTest {
    private static final int RECV_SIZE = 4096;
    private static final int RECV_COUNT = 8;
    private static final int READ_SIZE = 1 << 20;
    private static final int SIGNALED = SendWorkRequest.FLAG_SIGNALED;

    @Test
    void sendsAndReadsOverALoopbackConnection() {
        Map<String, Integer> before = RdmaTestEnv.resourceCounts();
        try (LoopbackPair p = new LoopbackPair(16, 128).connect(); Arena arena = Arena.ofConfined()) {
            log("connected QP " + p.a.qpNum() + " <-> QP " + p.b.qpNum() + " via " + p.gid + ", MTU "
                    + PortAttributes.mtuBytes(p.port.activeMtu()) + ", caps " + p.a.caps());
            Map<String, Integer> during = RdmaTestEnv.resourceCounts();
            if (before != null) {
                assertEquals(before.get("qp") + 2, during.get("qp"), "two QPs");
                assertEquals(before.get("srq") + 1, during.get("srq"), "one SRQ");
                assertEquals(before.get("cq") + 1, during.get("cq"), "one CQ");
            }

            MemorySegment recvBuffers = arena.allocate((long) RECV_SIZE * RECV_COUNT, 4096);
            MemorySegment sendBuffer = arena.allocate(8192, 4096);
            MemorySegment readSource = arena.allocate(READ_SIZE, 4096);
            MemorySegment readTarget = arena.allocate(READ_SIZE, 4096);
            try (MemoryRegion recvMr = p.pd.registerMemory(recvBuffers, AccessFlags.LOCAL_WRITE);
                 MemoryRegion sendMr = p.pd.registerMemory(sendBuffer, AccessFlags.LOCAL_WRITE);
                 MemoryRegion sourceMr = p.pd.registerMemory(readSource, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ);
                 MemoryRegion targetMr = p.pd.registerMemory(readTarget, AccessFlags.LOCAL_WRITE)) {

                ReceiveWorkRequest recv = new ReceiveWorkRequest(arena, 1);
                for (int i = 0; i < RECV_COUNT; i++) {
                    p.srq.postRecv(recv.clear().wrId(1000 + i).sge(0, recvMr, (long) i * RECV_SIZE, RECV_SIZE));
                }
                SendWorkRequest send = new SendWorkRequest(arena, 2);

                // 1. inline SEND a→b from memory that is not registered; overwritten right after posting
                MemorySegment inlineSource = arena.allocate(100);
                fill(inlineSource, 1);
                p.a.postSend(send.clear().wrId(1).opcode(SendWorkRequest.OPCODE_SEND)
                        .flags(SIGNALED | SendWorkRequest.FLAG_INLINE).sge(0, inlineSource.address(), 100, 0));
                inlineSource.fill((byte) 0);
                List<Completions.Wc> wcs = p.completions.await(2, timeout(30_000));
                assertSend(wcs, 1, p.a);
                Completions.Wc r1 = assertReceived(wcs, p.b, 100, recvBuffers, pattern(100, 1));
                assertFalse(r1.hasImm());
                log("inline SEND: " + wcs);

                // 2. SEND from registered memory, gathered from two SGEs (3000 bytes: three 1024-byte packets)
                fill(sendBuffer, 2);
                p.a.postSend(send.clear().wrId(2).opcode(SendWorkRequest.OPCODE_SEND).flags(SIGNALED)
                        .sge(0, sendMr, 0, 1000).sge(1, sendMr, 4096, 2000));
                wcs = p.completions.await(2, timeout(30_000));
                assertSend(wcs, 2, p.a);
                byte[] gathered = new byte[3000];
                MemorySegment.copy(sendBuffer, JAVA_BYTE, 0, gathered, 0, 1000);
                MemorySegment.copy(sendBuffer, JAVA_BYTE, 4096, gathered, 1000, 2000);
                assertReceived(wcs, p.b, 3000, recvBuffers, gathered);
                log("gathered SEND: " + wcs);

                // 3. SEND_WITH_IMM b→a (the other direction, same SRQ)
                fill(sendBuffer, 3);
                p.b.postSend(send.clear().wrId(3).opcode(SendWorkRequest.OPCODE_SEND_WITH_IMM).flags(SIGNALED)
                        .immData(0xCAFEBABE).sge(0, sendMr, 0, 256));
                wcs = p.completions.await(2, timeout(30_000));
                assertSend(wcs, 3, p.b);
                Completions.Wc r3 = assertReceived(wcs, p.a, 256, recvBuffers, pattern(256, 3));
                assertTrue(r3.hasImm(), r3.text());
                assertEquals(0xCAFEBABE, r3.imm(), r3.text());
                log("SEND_WITH_IMM: " + wcs);

                // 4. RDMA READ of 1 MiB: a reads b's registered memory (rkey) into its own
                fill(readSource, 4);
                readTarget.fill((byte) 0);
                long start = System.nanoTime();
                p.a.postSend(send.clear().wrId(4).opcode(SendWorkRequest.OPCODE_RDMA_READ).flags(SIGNALED)
                        .remote(sourceMr.address(), sourceMr.rkey()).sge(0, targetMr, 0, READ_SIZE));
                wcs = p.completions.await(1, timeout(20_000));
                Completions.Wc read = wcs.getFirst();
                log("RDMA READ 1 MiB: " + read + " in " + (System.nanoTime() - start) / 1_000_000 + " ms");
                assertTrue(read.isSuccess(), read.text());
                assertEquals(4, read.wrId());
                assertEquals(WorkCompletion.OPCODE_RDMA_READ, read.opcode());
                assertEquals(READ_SIZE, read.byteLen());
                assertEquals(p.a.qpNum(), read.qpNum());
                assertEquals(-1, readSource.mismatch(readTarget), "1 MiB read byte for byte");
                log("completion events used: " + p.completions.events());
                assertTrue(p.completions.events() >= 4, "every wait was woken by a completion-channel event");
            }
        }
        if (before != null) {
            assertEquals(before, RdmaTestEnv.resourceCounts(), "kernel objects after close");
        }
    }

    private static void assertSend(List<Completions.Wc> wcs, long wrId, QueuePair sender) {
        Completions.Wc wc = Completions.byWrId(wcs, wrId);
        assertTrue(wc.isSuccess(), wc.text());
        assertEquals(WorkCompletion.OPCODE_SEND, wc.opcode(), wc.text());
        assertEquals(sender.qpNum(), wc.qpNum(), wc.text());
    }

    private static Completions.Wc assertReceived(List<Completions.Wc> wcs, QueuePair receiver, int length,
                                                 MemorySegment recvBuffers, byte[] expected) {
        Completions.Wc wc = Completions.receive(wcs);
        assertEquals(WorkCompletion.OPCODE_RECV, wc.opcode(), wc.text());
        assertEquals(receiver.qpNum(), wc.qpNum(), wc.text());
        assertEquals(length, wc.byteLen(), wc.text());
        int slot = (int) (wc.wrId() - 1000);
        assertTrue(slot >= 0 && slot < RECV_COUNT, wc.text());
        byte[] got = recvBuffers.asSlice((long) slot * RECV_SIZE, length).toArray(JAVA_BYTE);
        assertEquals(-1, java.util.Arrays.mismatch(expected, got), "received bytes");
        return wc;
    }

    static byte[] pattern(int length, int seed) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) (i * 31 + seed * 7 + (i >>> 8));
        }
        return b;
    }

    static void fill(MemorySegment segment, int seed) {
        MemorySegment.copy(pattern((int) segment.byteSize(), seed), 0, segment, JAVA_BYTE, 0, (int) segment.byteSize());
    }
}
