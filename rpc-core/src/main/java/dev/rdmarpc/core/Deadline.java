package dev.rdmarpc.core;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** A point in time (on {@link System#nanoTime()}'s clock) by which a call must finish. */
public final class Deadline implements Comparable<Deadline> {
    private final long deadlineNanos;

    private Deadline(long deadlineNanos) {
        this.deadlineNanos = deadlineNanos;
    }

    /** A deadline this long from now. */
    public static Deadline after(long duration, TimeUnit unit) {
        return afterNanos(unit.toNanos(duration));
    }

    /** A deadline this long from now. */
    public static Deadline after(Duration duration) {
        return afterNanos(duration.toNanos());
    }

    static Deadline afterNanos(long nanos) {
        long now = System.nanoTime();
        long sum = now + nanos;
        if (nanos > 0 && sum < now) {
            sum = Long.MAX_VALUE;
        }
        return new Deadline(sum);
    }

    /** Time left until the deadline; zero or negative once it has passed. */
    public long timeRemaining(TimeUnit unit) {
        return unit.convert(deadlineNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
    }

    /** Nanoseconds left until the deadline; zero or negative once it has passed. */
    public long remainingNanos() {
        return deadlineNanos - System.nanoTime();
    }

    public boolean isExpired() {
        return deadlineNanos - System.nanoTime() <= 0;
    }

    /** The earlier of this and the other deadline. */
    public Deadline minimum(Deadline other) {
        if (other == null) {
            return this;
        }
        return compareTo(other) <= 0 ? this : other;
    }

    /** The earlier of two possibly-null deadlines. */
    public static Deadline earliest(Deadline a, Deadline b) {
        if (a == null) {
            return b;
        }
        return a.minimum(b);
    }

    @Override
    public int compareTo(Deadline o) {
        return Long.compare(deadlineNanos - o.deadlineNanos, 0);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Deadline d && d.deadlineNanos == deadlineNanos;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(deadlineNanos);
    }

    @Override
    public String toString() {
        return "Deadline{remaining=" + Duration.ofNanos(remainingNanos()) + "}";
    }
}
