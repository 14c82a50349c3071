package dev.rdmarpc.bench;

import picocli.CommandLine.Command;
import picocli.CommandLine.Unmatched;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** The {@code jmh} subcommand: runs the JMH microbenchmarks packaged in this jar (JMH's own options apply). */
@Command(name = "jmh", usageHelpAutoWidth = true,
        description = {"Runs the JMH microbenchmarks in this jar; every argument goes to JMH",
            "(e.g. jmh -prof gc -f 1 -wi 3 -i 5 MarshalBenchmark; jmh -h for JMH's options)."})
public final class JmhCommand implements Callable<Integer> {

    @Unmatched
    List<String> unmatched = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        org.openjdk.jmh.Main.main(unmatched.toArray(String[]::new));
        return 0;
    }
}
