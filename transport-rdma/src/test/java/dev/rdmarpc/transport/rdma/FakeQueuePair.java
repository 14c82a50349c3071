package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.transport.rdma.verbs.SendQueueTarget;
import dev.rdmarpc.transport.rdma.verbs.SendWorkRequest;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * A queue pair for unit tests of the send side: records every posted work request (with a copy of the bytes its
 * scatter/gather entries named at post time), can refuse posts as a full send queue does, and completes nothing by
 * itself (the test calls {@link SendPath#onCompletion} with the sequence numbers it chooses).
 */
final class FakeQueuePair implements SendQueueTarget {
    static final int ENOMEM = 12;

    /** One posted work request. */
    record Post(int seq, int opcode, int flags, long[] sgeAddresses, int[] sgeLengths, byte[] bytes,
                long remoteAddress, int rkey) {
        boolean signaled() {
            return (flags & SendWorkRequest.FLAG_SIGNALED) != 0;
        }

        boolean inline() {
            return (flags & SendWorkRequest.FLAG_INLINE) != 0;
        }
    }

    final List<Post> posts = new ArrayList<>();
    private final int maxInline;
    boolean refuse;
    boolean inError;
    boolean closed;

    FakeQueuePair(int maxInline) {
        this.maxInline = maxInline;
    }

    @Override
    public int qpNum() {
        return 0x77;
    }

    @Override
    public int maxInlineData() {
        return maxInline;
    }

    @Override
    public int tryPostSend(SendWorkRequest wr) {
        if (closed) {
            throw new IllegalStateException("posted on a destroyed queue pair");
        }
        if (refuse) {
            return ENOMEM;
        }
        int n = wr.numSge();
        long[] addresses = new long[n];
        int[] lengths = new int[n];
        int total = 0;
        for (int i = 0; i < n; i++) {
            addresses[i] = wr.sgeAddress(i);
            lengths[i] = wr.sgeLength(i);
            total += lengths[i];
        }
        byte[] bytes = new byte[wr.opcode() == SendWorkRequest.OPCODE_SEND ? total : 0];
        int at = 0;
        for (int i = 0; i < n && bytes.length > 0; i++) {
            MemorySegment.copy(MemorySegment.ofAddress(addresses[i]).reinterpret(lengths[i]), 0,
                    MemorySegment.ofArray(bytes), at, lengths[i]);
            at += lengths[i];
        }
        posts.add(new Post((int) wr.wrId(), wr.opcode(), wr.flags(), addresses, lengths, bytes, wr.remoteAddress(),
                wr.remoteRkey()));
        return 0;
    }

    @Override
    public void toError() {
        inError = true;
    }

    @Override
    public void close() {
        closed = true;
    }

    /** The posted work requests with {@code opcode}. */
    List<Post> posts(int opcode) {
        return posts.stream().filter(p -> p.opcode() == opcode).toList();
    }

    /** The last post. */
    Post last() {
        return posts.getLast();
    }
}
