package dev.rdmarpc.bench;

import de.erichseifert.vectorgraphics2d.Document;
import de.erichseifert.vectorgraphics2d.VectorGraphics2D;
import de.erichseifert.vectorgraphics2d.svg.SVGProcessor;
import de.erichseifert.vectorgraphics2d.util.PageSize;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.XYStyler;
import org.knowm.xchart.style.markers.SeriesMarkers;

import javax.imageio.ImageIO;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Draws latency percentile curves (one line per transport, one panel per workload) with XChart,
 * and writes them as one PNG and one SVG (VectorGraphics2D) grid.
 */
final class Plotter {
    static final int PANEL_WIDTH = 640;
    static final int PANEL_HEIGHT = 420;

    private static final Map<Transport, Color> COLORS = Map.of(
            Transport.NATIVE, new Color(0xD62728),
            Transport.NATIVE_TCP, new Color(0xFF7F0E),
            Transport.NATIVE_TCP_LENT, new Color(0xE377C2),
            Transport.NATIVE_RDMA, new Color(0x8C564B),
            Transport.GRPC_COMPAT, new Color(0x9467BD),
            Transport.GRPC_NETTY, new Color(0x1F77B4),
            Transport.GRPCNETTY_TO_RDMARPC, new Color(0x17BECF),
            Transport.GRPCCOMPAT_TO_GRPCNETTY, new Color(0xBCBD22),
            Transport.NETTY_RAW, new Color(0x2CA02C));

    private Plotter() {
    }

    /** Writes latency.png and latency.svg into {@code dir}; returns the PNG's path (null when nothing to draw). */
    static Path write(Path dir, List<CellResult> results) throws IOException {
        List<XYChart> charts = charts(results);
        if (charts.isEmpty()) {
            return null;
        }
        int cols = charts.size() == 1 ? 1 : charts.size() <= 4 ? 2 : 3;
        int rows = (charts.size() + cols - 1) / cols;
        int w = cols * PANEL_WIDTH;
        int h = rows * PANEL_HEIGHT;

        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        paintGrid(g, charts, cols, w, h);
        g.dispose();
        Path png = dir.resolve("latency.png");
        ImageIO.write(img, "png", png.toFile());

        VectorGraphics2D vg = new VectorGraphics2D();
        paintGrid(vg, charts, cols, w, h);
        Document doc = new SVGProcessor().getDocument(vg.getCommands(), new PageSize(0, 0, w, h));
        try (OutputStream out = Files.newOutputStream(dir.resolve("latency.svg"))) {
            doc.writeTo(out);
        }
        return png;
    }

    private static void paintGrid(Graphics2D g, List<XYChart> charts, int cols, int w, int h) {
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);
        for (int i = 0; i < charts.size(); i++) {
            Graphics2D cell = (Graphics2D) g.create((i % cols) * PANEL_WIDTH, (i / cols) * PANEL_HEIGHT, PANEL_WIDTH, PANEL_HEIGHT);
            charts.get(i).paint(cell, PANEL_WIDTH, PANEL_HEIGHT);
            cell.dispose();
        }
    }

    /** One chart per workload (call, payload, concurrency, rate) and executor mode, in the order measured. */
    static List<XYChart> charts(List<CellResult> results) {
        Map<List<Object>, List<CellResult>> panels = new LinkedHashMap<>();
        for (CellResult r : results) {
            if (r.histogram().getTotalCount() > 0) {
                CellSpec s = r.spec();
                panels.computeIfAbsent(List.of(s.workload(), s.concurrency(), s.mode(), s.rate(), s.executor()),
                        k -> new ArrayList<>()).add(r);
            }
        }
        List<XYChart> charts = new ArrayList<>();
        for (List<CellResult> panel : panels.values()) {
            charts.add(chart(panel));
        }
        return charts;
    }

    private static XYChart chart(List<CellResult> panel) {
        CellSpec first = panel.getFirst().spec();
        XYChart c = new XYChartBuilder().width(PANEL_WIDTH).height(PANEL_HEIGHT)
                .title(first.label() + (first.mode() == LoadMode.OPEN ? " (open loop)" : ""))
                .xAxisTitle("percentile").yAxisTitle("latency (us)").build();
        XYStyler st = c.getStyler();
        st.setLegendPosition(Styler.LegendPosition.InsideNW);
        st.setChartBackgroundColor(Color.WHITE);
        st.setPlotBackgroundColor(Color.WHITE);
        st.setPlotGridLinesColor(new Color(0xDDDDDD));
        st.setXAxisLogarithmic(true);
        st.setYAxisLogarithmic(true);
        st.setXAxisMin(1.0);
        st.setYAxisDecimalPattern("#,##0.#");
        c.setCustomXAxisTickLabelsFormatter(Plotter::percentileLabel);
        for (CellResult r : panel) {
            double[][] xy = curve(r.histogram());
            String name = r.spec().transport().cliName()
                    + (r.spec().transport() == Transport.NATIVE ? " (" + r.negotiated() + ")" : "");
            XYSeries s = c.addSeries(name, xy[0], xy[1]);
            s.setMarker(SeriesMarkers.NONE);
            s.setLineColor(COLORS.get(r.spec().transport()));
            s.setLineWidth(2f);
        }
        return c;
    }

    /**
     * The percentile curve: x = 1/(1-p) (so 90%, 99%, 99.9% are evenly spaced on a log axis),
     * y = latency in µs.
     */
    static double[][] curve(Histogram h) {
        List<double[]> pts = new ArrayList<>();
        double maxX = h.getTotalCount();
        for (HistogramIterationValue v : h.percentiles(5)) {
            double p = v.getPercentileLevelIteratedTo() / 100.0;
            double x = p >= 1.0 ? maxX : Math.min(maxX, 1.0 / (1.0 - p));
            pts.add(new double[]{Math.max(1.0, x), Math.max(0.001, v.getValueIteratedTo() / 1000.0)});
        }
        double[][] xy = new double[2][pts.size()];
        for (int i = 0; i < pts.size(); i++) {
            xy[0][i] = pts.get(i)[0];
            xy[1][i] = pts.get(i)[1];
        }
        return xy;
    }

    /** Tick label of x = 1/(1-p): "0%", "90%", "99%", "99.9%"… */
    static String percentileLabel(double x) {
        double p = 100.0 * (1.0 - 1.0 / x);
        if (p < 0.0001) {
            return "0%";
        }
        String s = String.format(Locale.ROOT, "%.6f", p).replaceFirst("0+$", "").replaceFirst("\\.$", "");
        return s + "%";
    }
}
