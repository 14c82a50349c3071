package com.example.echo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The README's quick start, run as it is written: its service served over TCP on loopback and called once. */
class QuickStartTest {

    @Test
    void theReadmeProgramServesAndCallsOverTcp() throws Exception {
        PrintStream out = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
        try {
            QuickStart.main(new String[0]);
        } finally {
            System.setOut(out);
        }
        assertEquals("echo: hello", printed.toString(StandardCharsets.UTF_8).strip());
    }

    @Test
    void surefireRunsTestsWithTheReadmesNativeAccessFlag() {
        assertTrue(QuickStartTest.class.getModule().isNativeAccessEnabled(),
                "the README's surefire argLine (--enable-native-access=ALL-UNNAMED) did not reach the test JVM");
    }
}
