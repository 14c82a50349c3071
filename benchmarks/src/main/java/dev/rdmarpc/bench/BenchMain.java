package dev.rdmarpc.bench;

import picocli.CommandLine;

import java.io.PrintWriter;

/** Entry point of {@code rdmarpc-bench}: the run by default, {@code server}, {@code jmh} and {@code compare} as subcommands. */
public final class BenchMain {
    private BenchMain() {
    }

    /** Runs the command line and exits with its code. */
    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs the command line and returns the exit code (for tests). */
    public static int execute(String... args) {
        System.setProperty("java.awt.headless", "true");
        return commandLine(new RunCommand()).execute(args);
    }

    /**
     * The command line of {@code rdmarpc-bench} around {@code run}: later options win, enum values are
     * matched by their command-line names in any case, and failures end with the run's exit codes.
     */
    static CommandLine commandLine(RunCommand run) {
        CommandLine cl = new CommandLine(run);
        cl.setOverwrittenOptionsAllowed(true);
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.getSubcommands().get("jmh").setStopAtUnmatched(true);
        cl.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            PrintWriter err = commandLine.getErr();
            if (e instanceof BenchException be) {
                err.println("rdmarpc-bench: " + be.getMessage());
                err.flush();
                return be.exitCode();
            }
            err.println("rdmarpc-bench: unexpected failure: " + e);
            e.printStackTrace(err);
            err.flush();
            return BenchException.FAILED;
        });
        return cl;
    }
}
