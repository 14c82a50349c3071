package dev.rdmarpc.bench;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Options, defaults, --quick and the validation of bad values. */
class RunCommandTest {

    RunConfig parse(String... args) {
        RunCommand cmd = new RunCommand();
        BenchMain.commandLine(cmd).parseArgs(args);
        return cmd.config();
    }

    @Test
    void defaultsAreTheReadmeRun() {
        RunConfig c = parse();
        assertEquals(List.of(Transport.NATIVE, Transport.GRPC_COMPAT, Transport.GRPC_NETTY, Transport.NETTY_RAW), c.transports());
        assertEquals(List.of(64, 4096, 1 << 20), c.payloads());
        assertEquals(List.of(1, 64), c.concurrency());
        assertEquals(LoadMode.CLOSED, c.mode());
        assertEquals(List.of(CallKind.UNARY), c.calls());
        assertEquals(List.of(ExecutorMode.DIRECT, ExecutorMode.DEFAULT), c.executors());
        // netty-raw has no executor: measured once
        assertEquals((3 * 2 + 1) * 3 * 2, c.cellCount());
        assertEquals(List.of(ExecutorMode.DIRECT), c.executorsOf(Transport.NETTY_RAW));
    }

    @Test
    void executorTakesOneModeOrAListAndQuickMeasuresDirectOnly() {
        assertEquals(List.of(ExecutorMode.DEFAULT), parse("--executor", "default").executors());
        assertEquals(List.of(ExecutorMode.DEFAULT, ExecutorMode.DIRECT), parse("--executor", "default,direct,default").executors());
        assertEquals(List.of(ExecutorMode.DIRECT), parse("--quick").executors());
        assertEquals(List.of(ExecutorMode.DIRECT, ExecutorMode.DEFAULT), parse("--quick", "--executor", "direct,default").executors());
    }

    @Test
    void everyTransportIsWarmedFirstUnlessQuickOrNoWarmAll() {
        assertTrue(parse().warmAllFirst());
        assertFalse(parse("--no-warm-all").warmAllFirst());
        assertFalse(parse("--quick").warmAllFirst());
    }

    @Test
    void quickShortensButExplicitOptionsWin() {
        RunConfig c = parse("--quick", "--payload", "128");
        assertEquals(List.of(128), c.payloads());
        assertEquals(List.of(1, 16), c.concurrency());
        assertEquals(Duration.ofSeconds(1), c.duration());
        assertEquals(Duration.ofMillis(300), c.warmup());
    }

    @Test
    void callsPerCellReplacesTheTimeWindow() {
        assertEquals(0, parse().callsPerCell());
        assertEquals(500, parse("--calls", "500").callsPerCell());
        assertEquals(BenchException.BAD_INPUT, assertThrows(BenchException.class, () -> parse("--calls", "0")).exitCode());
    }

    @Test
    void laterOptionsOverrideEarlierOnes() {
        assertEquals("b", parse("--out", "a", "--out", "b").out().toString());
    }

    @Test
    void openModeNeedsARate() {
        BenchException e = assertThrows(BenchException.class, () -> parse("--mode", "open"));
        assertEquals(BenchException.BAD_INPUT, e.exitCode());
        assertTrue(e.getMessage().contains("--rate"), e.getMessage());
        assertEquals(1000.0, parse("--mode", "open", "--rate", "1000").rate());
        assertThrows(BenchException.class, () -> parse("--rate", "1000"));
    }

    @Test
    void badValuesAreRefusedWithExitCode2() {
        assertEquals(BenchException.BAD_INPUT, assertThrows(BenchException.class, () -> parse("--concurrency", "0")).exitCode());
        assertEquals(BenchException.BAD_INPUT, assertThrows(BenchException.class, () -> parse("--server", "nohost")).exitCode());
        assertEquals(BenchException.BAD_INPUT, assertThrows(BenchException.class, () -> parse("--executor", "fast")).exitCode());
    }

    @Test
    void namesAreTheCommandLinesInAnyCase() {
        RunConfig c = parse("--transports", "native-tcp,GRPC-NETTY", "--call", "server-stream,Bidi", "--mode", "OPEN",
                "--rate", "10");
        assertEquals(List.of(Transport.NATIVE_TCP, Transport.GRPC_NETTY), c.transports());
        assertEquals(List.of(CallKind.SERVER_STREAM, CallKind.BIDI), c.calls());
        assertEquals(LoadMode.OPEN, c.mode());
        assertEquals("server-stream", CallKind.SERVER_STREAM.cliName());
        assertEquals("netty-raw", Transport.NETTY_RAW.toString());
    }

    @Test
    void unknownTransportNamesTheValidOnes() {
        StringWriter err = new StringWriter();
        CommandLine cl = BenchMain.commandLine(new RunCommand());
        cl.setErr(new PrintWriter(err));
        int code = cl.execute("--transports", "native,carrier-pigeon");
        assertEquals(2, code);
        assertTrue(err.toString().contains("Invalid value for option '--transports'"), err.toString());
        assertTrue(err.toString().contains("but was 'carrier-pigeon'"), err.toString());
        assertTrue(err.toString().contains("grpc-netty"), err.toString());
    }

    @Test
    void badSizeAndDurationAreExplained() {
        StringWriter err = new StringWriter();
        CommandLine cl = BenchMain.commandLine(new RunCommand());
        cl.setErr(new PrintWriter(err));
        assertEquals(2, cl.execute("--payload", "lots"));
        assertTrue(err.toString().contains("not a size: 'lots'"), err.toString());
        assertEquals(2, cl.execute("--duration", "forever"));
        assertTrue(err.toString().contains("not a duration: 'forever'"), err.toString());
    }
}
