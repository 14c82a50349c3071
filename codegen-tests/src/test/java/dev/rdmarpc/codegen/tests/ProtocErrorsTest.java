package dev.rdmarpc.codegen.tests;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What cannot be generated fails protoc with the plugin's message, naming the .proto file, the service and the rpc:
 * the real protoc the build uses runs the plugin (this module's test class path, launched by a script) on protos
 * written here, since a build that generates them would fail.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ProtocErrorsTest {
    /** Under target, not the system temporary directory, which may not allow running the launcher script. */
    private Path dir;

    @BeforeEach
    void makeDirectory() throws IOException {
        Files.createDirectories(Path.of("target"));
        dir = Files.createTempDirectory(Path.of("target"), "protoc-errors").toAbsolutePath();
    }

    /** Runs protoc with the rdmarpc plugin on one proto; returns its exit status and what it printed. */
    private String protoc(String parameter, String fileName, String proto) throws IOException, InterruptedException {
        Files.writeString(dir.resolve(fileName), proto);
        Path launcher = dir.resolve("protoc-gen-rdmarpc");
        Files.writeString(launcher, "#!/bin/sh\nexec '" + Path.of(System.getProperty("java.home"), "bin", "java") + "' -cp '"
                + BuildPaths.testClassPath() + "' dev.rdmarpc.codegen.RpcCodeGenerator\n");
        Files.setPosixFilePermissions(launcher, Set.of(java.nio.file.attribute.PosixFilePermission.OWNER_READ,
                java.nio.file.attribute.PosixFilePermission.OWNER_EXECUTE));
        Files.createDirectories(dir.resolve("out"));
        List<String> command = new ArrayList<>(List.of(BuildPaths.protoc().toAbsolutePath().toString(),
                "--plugin=protoc-gen-rdmarpc=" + launcher, "--rdmarpc_out=" + parameter + dir.resolve("out"),
                "--proto_path=" + dir, fileName));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "protoc ends");
        return p.exitValue() + " " + output.strip();
    }

    @Test
    void aMapEntryAsAnRpcType() throws Exception {
        String result = protoc("", "maps.proto", """
                syntax = "proto3";
                package maps;
                message Inventory { map<string, int32> counts = 1; }
                service Stock { rpc Count(Inventory) returns (Inventory.CountsEntry); }
                """);
        assertEquals("1 --rdmarpc_out: maps.proto: service maps.Stock: rpc Count: .maps.Inventory.CountsEntry is the entry"
                + " type of a map field, which has no Java class; use a message of its own", result);
    }

    @Test
    void anUnnamedPackageOuterClassNamedLikeAGeneratedNestedStub() throws Exception {
        String result = protoc("", "shop_stub.proto", """
                syntax = "proto3";
                message Order { string id = 1; }
                service Shop { rpc Buy(Order) returns (Order); }
                """);
        assertTrue(result.startsWith("1 --rdmarpc_out: shop_stub.proto: service Shop: rpc Buy: the class ShopStub.Order is"
                + " in the unnamed package, where the generated class's own ShopStub hides it"), result);
    }

    @Test
    void anAttachmentsSelectorThatMatchesNothing() throws Exception {
        String result = protoc("attachments=shop.Shop/Sell:", "shop.proto", """
                syntax = "proto3";
                package shop;
                message Order { string id = 1; }
                service Shop { rpc Buy(Order) returns (Order); }
                """);
        assertEquals("1 --rdmarpc_out: rdmarpc codegen option attachments=shop.Shop/Sell matches no file, service or rpc"
                + " protoc asked to generate", result);
    }
}
