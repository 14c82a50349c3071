package dev.rdmarpc.bench.jmh;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Control;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The slab pool's allocate and release: on one thread (a 64-byte control frame, a 4 KiB message), on two
 * threads each using its own blocks, and across threads (one thread allocates, the other releases, as an
 * I/O thread and a callback thread do).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class SlabPoolBenchmark {

    /** One pool for every thread of a trial. */
    @State(Scope.Benchmark)
    public static class PoolState {
        final SlabPool pool = new SlabPool(64L << 20, false);
    }

    /**
     * A pool and a bounded single-producer single-consumer ring between the two threads of a group. A thread
     * that finds the ring full (empty) spins until the other catches up, or until JMH ends the iteration.
     */
    @State(Scope.Group)
    public static class HandOff {
        private static final int RING = 1024;

        @Param({"64", "4096"})
        int size;

        final SlabPool pool = new SlabPool(64L << 20, false);
        final AtomicReferenceArray<SlabBuffer> ring = new AtomicReferenceArray<>(RING);
        long produced;
        long consumed;

        boolean offer(SlabBuffer b) {
            int slot = (int) (produced & (RING - 1));
            if (ring.get(slot) != null) {
                return false;
            }
            ring.lazySet(slot, b);
            produced++;
            return true;
        }

        SlabBuffer poll() {
            int slot = (int) (consumed & (RING - 1));
            SlabBuffer b = ring.get(slot);
            if (b != null) {
                ring.lazySet(slot, null);
                consumed++;
            }
            return b;
        }

        @TearDown(Level.Trial)
        public void releaseLeftovers() {
            for (int i = 0; i < RING; i++) {
                SlabBuffer b = ring.getAndSet(i, null);
                if (b != null) {
                    b.release();
                }
            }
        }
    }

    /** A control frame's block (64 bytes), allocated and released on one thread. */
    @Benchmark
    public int allocateRelease64(PoolState s) {
        SlabBuffer b = s.pool.allocate(64);
        int c = b.capacity();
        b.release();
        return c;
    }

    /** A 4 KiB block, allocated and released on one thread. */
    @Benchmark
    public int allocateRelease4k(PoolState s) {
        SlabBuffer b = s.pool.allocate(4096);
        int c = b.capacity();
        b.release();
        return c;
    }

    /** Two threads allocating and releasing 4 KiB blocks of the same pool, each its own. */
    @Benchmark
    @Threads(2)
    public int allocateRelease4kTwoThreads(PoolState s) {
        SlabBuffer b = s.pool.allocate(4096);
        int c = b.capacity();
        b.release();
        return c;
    }

    /** Allocates a block and hands it to the other thread of the group. */
    @Benchmark
    @Group("crossThread")
    @GroupThreads(1)
    public int produce(HandOff h, Control control) {
        SlabBuffer b = h.pool.allocate(h.size);
        while (!h.offer(b)) {
            if (control.stopMeasurement) {
                b.release();
                return 0;
            }
            Thread.onSpinWait();
        }
        return 1;
    }

    /** Releases a block the other thread of the group allocated. */
    @Benchmark
    @Group("crossThread")
    @GroupThreads(1)
    public int consume(HandOff h, Control control) {
        SlabBuffer b;
        while ((b = h.poll()) == null) {
            if (control.stopMeasurement) {
                return 0;
            }
            Thread.onSpinWait();
        }
        b.release();
        return 1;
    }
}
