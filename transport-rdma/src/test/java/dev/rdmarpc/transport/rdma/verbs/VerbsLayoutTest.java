package dev.rdmarpc.transport.rdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compiles a C program against the installed {@code <infiniband/verbs.h>} and checks every struct size, alignment
 * and member offset/size, every {@code ibv_context_ops} slot and every enum value the Java binding uses.
 * Skipped (with the reason) when gcc or libibverbs-dev is missing.
 */
class VerbsLayoutTest {
    @TempDir
    static Path dir;

    private static final Map<String, String> facts = new HashMap<>();

    @BeforeAll
    static void compileAndRun() throws Exception {
        assumeTrue(run(List.of("gcc", "--version"), dir).exitCode == 0,
                "gcc not found: apt-get install gcc (the layout test compiles a C program)");
        Path probe = dir.resolve("probe.c");
        Files.writeString(probe, "#include <infiniband/verbs.h>\nint main(void){return 0;}\n");
        Result header = run(List.of("gcc", "-fsyntax-only", probe.toString()), dir);
        assumeTrue(header.exitCode == 0,
                "<infiniband/verbs.h> not usable (" + header.output.strip() + "): apt-get install libibverbs-dev");

        Path source = dir.resolve("layouts.c");
        Files.writeString(source, cProgram());
        Path exe = dir.resolve("layouts");
        Result cc = run(List.of("gcc", "-std=gnu11", "-Wall", "-o", exe.toString(), source.toString()), dir);
        if (cc.exitCode != 0) {
            fail("gcc failed on the generated layout program (a Java member name or constant does not exist in "
                    + "the header?):\n" + cc.output + "\n--- program ---\n" + Files.readString(source));
        }
        Result out = run(List.of(exe.toString()), dir);
        assertEquals(0, out.exitCode, out.output);
        for (String line : out.output.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                facts.put(line.substring(0, eq), line.substring(eq + 1).strip());
            }
        }
    }

    private static String cProgram() {
        StringBuilder c = new StringBuilder("""
                #include <stddef.h>
                #include <stdio.h>
                #include <infiniband/verbs.h>
                #define M(T, F) printf("%s.%s=%zu %zu\\n", #T, #F, offsetof(T, F), sizeof(((T *)0)->F))
                #define S(T) printf("%s=%zu %zu\\n", #T, sizeof(T), _Alignof(T))
                #define K(N) printf("%s=%lld\\n", #N, (long long)(N))
                int main(void) {
                """);
        for (VerbsLayouts.CType type : VerbsLayouts.ALL) {
            c.append("    S(").append(type.cType()).append(");\n");
            for (CLayouts.Member m : type.members()) {
                c.append("    M(").append(type.cType()).append(", ").append(m.cDesignator()).append(");\n");
            }
        }
        for (String name : VerbsConstants.ALL.keySet()) {
            c.append("    K(").append(name).append(");\n");
        }
        return c.append("    return 0;\n}\n").toString();
    }

    @Test
    void structSizesAndAlignmentsMatchTheHeader() {
        List<String> errors = new ArrayList<>();
        for (VerbsLayouts.CType type : VerbsLayouts.ALL) {
            String[] sizeAlign = fact(type.cType()).split(" ");
            long size = Long.parseLong(sizeAlign[0]);
            long align = Long.parseLong(sizeAlign[1]);
            if (type.complete() && size != type.layout().byteSize()) {
                errors.add(type.cType() + ": sizeof " + size + " in C, " + type.layout().byteSize() + " in Java");
            }
            if (!type.complete() && type.layout().byteSize() > size) {
                errors.add(type.cType() + ": Java prefix " + type.layout().byteSize() + " bytes > sizeof " + size);
            }
            if (type.complete() && align != type.layout().byteAlignment()) {
                errors.add(type.cType() + ": alignment " + align + " in C, " + type.layout().byteAlignment() + " in Java");
            }
        }
        assertTrue(errors.isEmpty(), String.join("\n", errors));
    }

    @Test
    void everyMemberOffsetAndSizeMatchesTheHeader() {
        List<String> errors = new ArrayList<>();
        int checked = 0;
        for (VerbsLayouts.CType type : VerbsLayouts.ALL) {
            for (CLayouts.Member m : type.members()) {
                String[] offSize = fact(type.cType() + "." + m.cDesignator()).split(" ");
                long offset = Long.parseLong(offSize[0]);
                long size = Long.parseLong(offSize[1]);
                if (offset != m.offset() || size != m.size()) {
                    errors.add(type.cType() + "." + m.cDesignator() + ": C offset " + offset + " size " + size
                            + ", Java offset " + m.offset() + " size " + m.size());
                }
                checked++;
            }
        }
        assertTrue(errors.isEmpty(), String.join("\n", errors));
        assertTrue(checked > 150, "checked only " + checked + " members");
    }

    @Test
    void contextOpsSlotsUsedForStaticInlineVerbsMatchTheHeader() {
        Map<String, Long> used = Map.of(
                "ops.poll_cq", IbvContextStruct.OPS_POLL_CQ,
                "ops.req_notify_cq", IbvContextStruct.OPS_REQ_NOTIFY_CQ,
                "ops.post_send", IbvContextStruct.OPS_POST_SEND,
                "ops.post_recv", IbvContextStruct.OPS_POST_RECV,
                "ops.post_srq_recv", IbvContextStruct.OPS_POST_SRQ_RECV,
                "ops.alloc_mw", IbvContextStruct.OPS_ALLOC_MW,
                "ops.bind_mw", IbvContextStruct.OPS_BIND_MW,
                "ops.dealloc_mw", IbvContextStruct.OPS_DEALLOC_MW);
        used.forEach((field, javaOffset) -> assertEquals(
                Long.parseLong(fact("struct ibv_context." + field).split(" ")[0]), javaOffset, field));
    }

    @Test
    void enumValuesMatchTheHeader() {
        List<String> errors = new ArrayList<>();
        VerbsConstants.ALL.forEach((name, javaValue) -> {
            long c = Long.parseLong(fact(name));
            if (c != javaValue) {
                errors.add(name + " = " + c + " in C, " + javaValue + " in Java");
            }
        });
        assertTrue(errors.isEmpty(), String.join("\n", errors));
    }

    private static String fact(String key) {
        String v = facts.get(key);
        if (v == null) {
            fail("the C program printed nothing for " + key);
        }
        return v;
    }

    private record Result(int exitCode, String output) {
    }

    private static Result run(List<String> command, Path cwd) throws InterruptedException {
        try {
            Process p = new ProcessBuilder(command).directory(cwd.toFile()).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new Result(-1, "timed out: " + command);
            }
            return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
        } catch (IOException e) {
            return new Result(-1, e.toString());
        }
    }
}
