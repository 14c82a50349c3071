package dev.rdmarpc.bench;

/** A failure the harness reports as one clear line and a process exit code, without a stack trace. */
public final class BenchException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Exit code for bad input (options, sizes the server refuses). */
    public static final int BAD_INPUT = 2;
    /** Exit code for a failed run (server unreachable or not starting, calls failing). */
    public static final int FAILED = 3;

    private final int exitCode;

    /** A failure with this message and exit code. */
    public BenchException(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    /** A failure with this message, exit code and cause. */
    public BenchException(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    /** The process exit code this failure should end with. */
    public int exitCode() {
        return exitCode;
    }
}
