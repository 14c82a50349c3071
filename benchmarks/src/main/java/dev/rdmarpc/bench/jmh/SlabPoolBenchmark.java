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

import java.util.concurrent.Exchanger;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

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
     * A pool and the batches the two threads of a group trade: the producer fills a batch with blocks it
     * allocates, the consumer releases a batch's blocks, and they swap batches when the producer's is full
     * and the consumer's empty. A thread waiting for the swap parks (it does not spin), so the figure stays
     * meaningful on a machine with fewer free cores than threads; the swap costs one exchange per batch.
     */
    @State(Scope.Group)
    public static class HandOff {
        static final int BATCH = 2048;

        @Param({"64", "4096"})
        int size;

        final SlabPool pool = new SlabPool(64L << 20, false);
        final Exchanger<SlabBuffer[]> exchanger = new Exchanger<>();
        SlabBuffer[] producing = new SlabBuffer[BATCH];
        int produced;
        SlabBuffer[] consuming = new SlabBuffer[BATCH];
        int toConsume;

        /** Trades {@code mine} for the other thread's batch; null when the iteration ends first. */
        SlabBuffer[] swap(SlabBuffer[] mine, Control control) {
            while (!control.stopMeasurement) {
                try {
                    return exchanger.exchange(mine, 10, TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    // look at stopMeasurement again
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return null;
                }
            }
            return null;
        }

        @TearDown(Level.Trial)
        public void releaseLeftovers() {
            for (SlabBuffer[] batch : new SlabBuffer[][] {producing, consuming}) {
                for (int i = 0; i < batch.length; i++) {
                    if (batch[i] != null) {
                        batch[i].release();
                        batch[i] = null;
                    }
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

    /** Allocates a block into the batch the other thread of the group will release. */
    @Benchmark
    @Group("crossThread")
    @GroupThreads(1)
    public int produce(HandOff h, Control control) {
        h.producing[h.produced++] = h.pool.allocate(h.size);
        if (h.produced == HandOff.BATCH) {
            SlabBuffer[] empty = h.swap(h.producing, control);
            if (empty == null) { // the iteration ended before the consumer came: give these back here
                for (int i = 0; i < HandOff.BATCH; i++) {
                    h.producing[i].release();
                    h.producing[i] = null;
                }
            } else {
                h.producing = empty;
            }
            h.produced = 0;
        }
        return h.produced;
    }

    /** Releases one block of a batch the other thread of the group allocated. */
    @Benchmark
    @Group("crossThread")
    @GroupThreads(1)
    public int consume(HandOff h, Control control) {
        if (h.toConsume == 0) {
            SlabBuffer[] full = h.swap(h.consuming, control);
            if (full == null) {
                return 0;
            }
            h.consuming = full;
            h.toConsume = HandOff.BATCH;
        }
        int i = --h.toConsume;
        h.consuming[i].release();
        h.consuming[i] = null;
        return i;
    }
}
