package dev.rdmarpc.transport.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** Machine-independent checks of the binding: error reporting, soft loading, flyweight encodings. */
class VerbsBindingTest {

    @Test
    void exceptionNamesTheCallAndTheErrno() {
        VerbsException e = new VerbsException("ibv_modify_qp(RTR)", 22);
        assertEquals("ibv_modify_qp(RTR) failed: errno 22 (EINVAL)", e.getMessage());
        assertEquals("EINVAL", e.errnoName());
        assertEquals("ibv_modify_qp(RTR)", e.call());
        assertEquals("ibv_reg_mr failed: errno 12 (ENOMEM); raise RLIMIT_MEMLOCK",
                new VerbsException("ibv_reg_mr", 12, "raise RLIMIT_MEMLOCK").getMessage());
        assertEquals("ibv_x failed: no lib", new VerbsException("ibv_x", 0, "no lib").getMessage());
    }

    @Test
    void errnoNamesCoverTheLinuxTable() {
        assertEquals("EPERM", Errno.name(1));
        assertEquals("ENOSYS", Errno.name(38));
        assertEquals("EOPNOTSUPP", Errno.name(95));
        assertEquals("ETIMEDOUT", Errno.name(110));
        assertEquals("EHWPOISON", Errno.name(133));
        assertEquals("errno41", Errno.name(41));
        assertEquals("errno9999", Errno.name(9999));
        assertEquals("errno 38 (ENOSYS)", Errno.describe(38));
    }

    @Test
    void returnCodesFoldIntoOnePositiveErrno() {
        assertEquals(0, VerbsException.errnoOf(0, 5));
        assertEquals(22, VerbsException.errnoOf(22, 0), "libibverbs returns errno directly");
        assertEquals(12, VerbsException.errnoOf(-12, 0), "rxe returns a negative errno");
        assertEquals(11, VerbsException.errnoOf(-1, 11), "-1 means: see errno");
        assertEquals(1, VerbsException.errnoOf(-1, 0), "-1 without errno is -EPERM");
    }

    @Test
    void aMissingLibraryIsAReasonNotAnException() {
        LibIbverbs.Loaded loaded = LibIbverbs.tryLoad("libibverbs-does-not-exist.so.1");
        assertNull(loaded.lookup());
        assertEquals("libibverbs-does-not-exist.so.1 not found: apt-get install libibverbs1 ibverbs-providers",
                loaded.failure());
    }

    @Test
    void deviceListNeverThrowsForNoRdma() {
        try (DeviceList list = Verbs.deviceList()) {
            if (list.isEmpty()) {
                assertNotNull(list.emptyReason());
                System.out.println("[verbs] no RDMA here: " + list.emptyReason());
            } else {
                assertNull(list.emptyReason());
                System.out.println("[verbs] devices: " + list);
            }
        }
        if (!Verbs.isAvailable()) {
            assertTrue(Verbs.unavailableReason().contains("libibverbs"), Verbs.unavailableReason());
        }
    }

    @Test
    void sendWorkRequestWritesTheCStruct() {
        try (Arena arena = Arena.ofConfined()) {
            SendWorkRequest wr = new SendWorkRequest(arena, 2);
            SendWorkRequest next = new SendWorkRequest(arena, 1);
            wr.wrId(0x1122334455667788L).opcode(SendWorkRequest.OPCODE_SEND_WITH_IMM)
                    .flags(SendWorkRequest.FLAG_SIGNALED | SendWorkRequest.FLAG_INLINE)
                    .immData(0xCAFEBABE).remote(0xABCDEF0012L, 0x4321)
                    .sge(1, 0x2000, 64, 7).next(next);
            MemorySegment s = wr.segment();
            assertEquals(0x1122334455667788L, s.get(JAVA_LONG, IbvSendWr.WR_ID));
            assertEquals(2, s.get(JAVA_INT, IbvSendWr.NUM_SGE));
            assertEquals(SendWorkRequest.OPCODE_SEND_WITH_IMM, s.get(JAVA_INT, IbvSendWr.OPCODE));
            assertEquals(10, s.get(JAVA_INT, IbvSendWr.SEND_FLAGS));
            // imm_data is __be32: the first byte in memory is the most significant
            assertEquals((byte) 0xCA, s.get(JAVA_BYTE, IbvSendWr.IMM_DATA));
            assertEquals((byte) 0xBE, s.get(JAVA_BYTE, IbvSendWr.IMM_DATA + 3));
            assertEquals(0xABCDEF0012L, s.get(JAVA_LONG, IbvSendWr.RDMA_REMOTE_ADDR));
            assertEquals(0x4321, s.get(JAVA_INT, IbvSendWr.RDMA_RKEY));
            assertEquals(next.address(), s.get(ADDRESS, IbvSendWr.NEXT).address());
            MemorySegment sgl = s.get(ADDRESS, IbvSendWr.SG_LIST).reinterpret(2 * IbvSge.SIZE);
            assertEquals(0x2000, sgl.get(JAVA_LONG, IbvSge.SIZE + IbvSge.ADDR));
            assertEquals(64, sgl.get(JAVA_INT, IbvSge.SIZE + IbvSge.LENGTH));
            assertEquals(7, sgl.get(JAVA_INT, IbvSge.SIZE + IbvSge.LKEY));
            wr.clear();
            assertEquals(0, wr.numSge());
            assertEquals(0, s.get(ADDRESS, IbvSendWr.NEXT).address());
            assertThrows(IndexOutOfBoundsException.class, () -> wr.sge(2, 0, 0, 0));
        }
    }

    @Test
    void receiveWorkRequestWritesTheCStruct() {
        try (Arena arena = Arena.ofConfined()) {
            ReceiveWorkRequest wr = new ReceiveWorkRequest(arena, 1).wrId(42).sge(0, 0x3000, 4096, 9);
            MemorySegment s = wr.segment();
            assertEquals(42, s.get(JAVA_LONG, IbvRecvWr.WR_ID));
            assertEquals(1, s.get(JAVA_INT, IbvRecvWr.NUM_SGE));
            MemorySegment sgl = s.get(ADDRESS, IbvRecvWr.SG_LIST).reinterpret(IbvSge.SIZE);
            assertEquals(0x3000, sgl.get(JAVA_LONG, IbvSge.ADDR));
            assertEquals(4096, sgl.get(JAVA_INT, IbvSge.LENGTH));
        }
    }

    @Test
    void workCompletionReadsTheCStruct() {
        try (Arena arena = Arena.ofConfined()) {
            WorkCompletionBatch batch = new WorkCompletionBatch(arena, 4);
            MemorySegment s = batch.segment();
            long at = 2 * IbvWc.SIZE;
            s.set(JAVA_LONG, at + IbvWc.WR_ID, 77);
            s.set(JAVA_INT, at + IbvWc.STATUS, WorkCompletion.STATUS_RETRY_EXC_ERR);
            s.set(JAVA_INT, at + IbvWc.OPCODE, WorkCompletion.OPCODE_RECV);
            s.set(JAVA_INT, at + IbvWc.BYTE_LEN, 100);
            s.set(JAVA_BYTE, at + IbvWc.IMM_DATA, (byte) 0x12);
            s.set(JAVA_BYTE, at + IbvWc.IMM_DATA + 3, (byte) 0x78);
            s.set(JAVA_INT, at + IbvWc.WC_FLAGS, WorkCompletion.FLAG_WITH_IMM);
            s.set(JAVA_INT, at + IbvWc.QP_NUM, 17);
            WorkCompletion wc = batch.get(2);
            assertEquals(77, wc.wrId());
            assertFalse(wc.isSuccess());
            assertEquals("IBV_WC_RETRY_EXC_ERR", WorkCompletion.statusName(wc.status()));
            assertEquals(0x12000078, wc.immData());
            assertTrue(wc.hasImmData());
            assertEquals(17, wc.qpNum());
            assertTrue(wc.describe().contains("IBV_WC_RETRY_EXC_ERR (12)"), wc.describe());
            assertEquals("IBV_WC_RECV", WorkCompletion.opcodeName(WorkCompletion.OPCODE_RECV));
        }
    }

    @Test
    void gidRendering() {
        byte[] raw = new byte[16];
        raw[10] = (byte) 0xff;
        raw[11] = (byte) 0xff;
        raw[12] = (byte) 192;
        raw[13] = (byte) 168;
        raw[14] = 77;
        raw[15] = 1;
        Gid gid = Gid.of(raw);
        assertTrue(gid.isIpv4Mapped());
        assertEquals("::ffff:192.168.77.1", gid.toString());
        raw[0] = (byte) 0xfe;
        raw[1] = (byte) 0x80;
        assertEquals("fe80:0000:0000:0000:0000:ffff:c0a8:4d01", Gid.of(raw).toString());
        assertFalse(Gid.of(raw).isIpv4Mapped());
        assertTrue(Gid.of(new byte[16]).isZero());
    }

    @Test
    void memoryWindowRkeyIncrementsOnlyTheTag() {
        assertEquals(0x12345601, MemoryWindow.nextRkey(0x12345600));
        assertEquals(0x12345600, MemoryWindow.nextRkey(0x123456ff));
    }
}
