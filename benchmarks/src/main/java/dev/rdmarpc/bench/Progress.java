package dev.rdmarpc.bench;

import java.io.PrintStream;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * The one-line progress display: current transport and workload, phase, elapsed time and calls so
 * far, redrawn in place every 200 ms on a terminal. Off a terminal it prints a line as each cell
 * starts instead; finished cells are printed as lines in both cases.
 */
final class Progress implements AutoCloseable {
    private final PrintStream out;
    private final boolean terminal;
    private final long runStart = System.nanoTime();
    private final int totalCells;
    private final Thread ticker;
    private volatile int cell;
    private volatile String label = "starting";
    private volatile String phase = "";
    private volatile long phaseStart;
    private volatile long phaseLength;
    private volatile LongSupplier calls = () -> 0;
    private boolean drawn;

    Progress(PrintStream out, boolean terminal, int totalCells) {
        this.out = out;
        this.terminal = terminal;
        this.totalCells = totalCells;
        this.ticker = new Thread(this::tick, "bench-progress");
        ticker.setDaemon(true);
        if (terminal) {
            ticker.start();
        }
    }

    /** Whether standard output is an interactive terminal. */
    static boolean isTerminal() {
        java.io.Console c = System.console();
        return c != null && c.isTerminal();
    }

    /** A cell starts: from here on it is measured (or stopped) and its result reported. */
    void cell(int index, String what) {
        cell = index;
        label = what;
        phase = "";
        if (!terminal) {
            synchronized (this) {
                out.println(String.format(Locale.ROOT, "[%d/%d] %s", index, totalCells, what));
                out.flush();
            }
        }
    }

    void status(String what) {
        label = what;
        phase = "";
    }

    void phase(String name, long lengthNanos, LongSupplier callCounter) {
        phaseStart = System.nanoTime();
        phaseLength = lengthNanos;
        calls = callCounter;
        phase = name;
    }

    /** Prints a line above the progress line. */
    synchronized void println(String line) {
        clear();
        out.println(line);
        draw();
    }

    private void tick() {
        while (!Thread.currentThread().isInterrupted()) {
            synchronized (this) {
                clear();
                draw();
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void clear() {
        if (terminal && drawn) {
            out.print("\r\033[K");
            drawn = false;
        }
    }

    private void draw() {
        if (!terminal) {
            return;
        }
        long elapsed = (System.nanoTime() - runStart) / 1_000_000_000L;
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "[%d/%d] %s", cell, totalCells, label));
        String p = phase;
        if (!p.isEmpty()) {
            double in = (System.nanoTime() - phaseStart) / 1e9;
            sb.append(" | ").append(p);
            if (phaseLength > 0) {
                sb.append(String.format(Locale.ROOT, " %.1f/%.1f s", Math.min(in, phaseLength / 1e9), phaseLength / 1e9));
            }
            sb.append(String.format(Locale.ROOT, " | %,d calls", calls.getAsLong()));
        }
        sb.append(String.format(Locale.ROOT, " | elapsed %d:%02d", elapsed / 60, elapsed % 60));
        out.print(sb);
        out.flush();
        drawn = true;
    }

    @Override
    public synchronized void close() {
        ticker.interrupt();
        clear();
        out.flush();
    }
}
