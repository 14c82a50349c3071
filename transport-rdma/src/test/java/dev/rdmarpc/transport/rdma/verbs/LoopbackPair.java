package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.GID_INDEX;
import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.PORT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Test fixture: one device context with a PD, a completion channel, one CQ, one SRQ and two RC QPs (a, b) that
 * share them; {@link #connect()} connects a and b to each other over the local port (loopback).
 * {@link #close()} releases everything in reverse order and asserts each object reports closed.
 */
final class LoopbackPair implements AutoCloseable {
    static final int QP_ACCESS = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ | AccessFlags.REMOTE_WRITE;

    final Arena arena = Arena.ofShared();
    final IbvContext ctx;
    final PortAttributes port;
    final Gid gid;
    final ProtectionDomain pd;
    final CompletionChannel channel;
    final CompletionQueue cq;
    final SharedReceiveQueue srq;
    final QueuePair a;
    final QueuePair b;
    final Completions completions;
    final int psnA = ThreadLocalRandom.current().nextInt(1 << 24);
    final int psnB = ThreadLocalRandom.current().nextInt(1 << 24);
    private final List<AutoCloseable> opened = new ArrayList<>();

    LoopbackPair(int srqSize, int maxInlineData) {
        try {
            ctx = track(RdmaTestEnv.openDevice());
            port = ctx.queryPort(PORT);
            gid = ctx.queryGid(PORT, GID_INDEX);
            pd = track(ctx.allocProtectionDomain());
            channel = track(ctx.createCompletionChannel());
            cq = track(ctx.createCompletionQueue(64, channel, 0));
            srq = track(pd.createSharedReceiveQueue(srqSize, 1));
            a = track(pd.createQueuePair(QueuePairConfig.rc(cq, srq, 16, 2, maxInlineData)));
            b = track(pd.createQueuePair(QueuePairConfig.rc(cq, srq, 16, 2, maxInlineData)));
            completions = new Completions(arena, cq, channel);
            completions.arm(); // armed from the start: every wait below is a real completion-channel event
        } catch (RuntimeException | Error e) {
            try {
                close();
            } catch (RuntimeException | Error suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    private <T extends AutoCloseable> T track(T resource) {
        opened.add(resource);
        return resource;
    }

    /** RESET→INIT→RTR→RTS for both QPs, each pointing at the other, with default retry settings. */
    LoopbackPair connect() {
        a.toInit(PORT, QP_ACCESS);
        b.toInit(PORT, QP_ACCESS);
        a.toRtr(RtrParameters.roce(b.qpNum(), psnB, gid, GID_INDEX, PORT, port.activeMtu()));
        b.toRtr(RtrParameters.roce(a.qpNum(), psnA, gid, GID_INDEX, PORT, port.activeMtu()));
        a.toRts(RtsParameters.defaults(psnA));
        b.toRts(RtsParameters.defaults(psnB));
        assertEquals(QpState.RTS, a.queryState());
        assertEquals(QpState.RTS, b.queryState());
        return this;
    }

    @Override
    public void close() {
        RuntimeException failure = null;
        for (int i = opened.size() - 1; i >= 0; i--) {
            AutoCloseable resource = opened.get(i);
            try {
                resource.close();
            } catch (Exception e) {
                if (failure == null) {
                    failure = new IllegalStateException("releasing " + resource + " failed", e);
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        arena.close();
        if (failure != null) {
            throw failure;
        }
        if (a != null) {
            assertTrue(a.isClosed() && b.isClosed() && srq.isClosed() && cq.isClosed() && channel.isClosed()
                    && pd.isClosed() && ctx.isClosed(), "every verbs object reports closed");
        }
    }
}
