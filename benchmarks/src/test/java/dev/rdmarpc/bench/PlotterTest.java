package dev.rdmarpc.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The percentile plot is written as PNG and SVG. */
class PlotterTest {

    @Test
    void drawsOnePanelPerWorkloadAsPngAndSvg(@TempDir Path dir) throws Exception {
        System.setProperty("java.awt.headless", "true");
        List<CellResult> rs = List.of(
                TestResults.of(Transport.GRPC_NETTY, 64, 1, 200, 5000),
                TestResults.of(Transport.NATIVE, 64, 1, 50, 20000),
                TestResults.of(Transport.NETTY_RAW, 64, 16, 40, 20000));
        Path png = Plotter.write(dir, rs);
        assertNotNull(png);
        BufferedImage img = ImageIO.read(png.toFile());
        assertEquals(2 * Plotter.PANEL_WIDTH, img.getWidth());
        assertEquals(Plotter.PANEL_HEIGHT, img.getHeight());
        String svg = Files.readString(dir.resolve("latency.svg"));
        assertTrue(svg.startsWith("<?xml") && svg.contains("<svg"), svg.substring(0, 100));
    }

    @Test
    void percentileAxisLabels() {
        assertEquals("0%", Plotter.percentileLabel(1));
        assertEquals("90%", Plotter.percentileLabel(10));
        assertEquals("99%", Plotter.percentileLabel(100));
        assertEquals("99.9%", Plotter.percentileLabel(1000));
    }
}
