// Driver for benchmarks/bench_ebnc.py --java (built by build.sh beside it; not the authors' code).
// Times EBNC.wdBayes.buildClassifier in-process: one warm-up fit, then `repeats` fits; prints medians (ms).
// usage: java -cp ... EBNCTime data.arff repeats -- <wdBayes options>
import EBNC.wdBayes;
import java.io.BufferedReader;
import java.io.FileReader;
import java.io.PrintStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import weka.core.Instances;

public class EBNCTime {
	public static void main(String[] args) throws Exception {
		Instances data = new Instances(new BufferedReader(new FileReader(args[0])));
		data.setClassIndex(data.numAttributes() - 1);
		int repeats = Integer.parseInt(args[1]);
		String[] opts = Arrays.copyOfRange(args, 3, args.length);
		ThreadMXBean mx = ManagementFactory.getThreadMXBean();
		PrintStream out = System.out;
		System.setOut(new PrintStream(OutputStream.nullOutputStream()));
		double[] wall = new double[repeats], cpu = new double[repeats];
		for (int r = -1; r < repeats; r++) {
			wdBayes c = new wdBayes();
			c.setOptions(opts.clone());
			long t0 = System.nanoTime(), c0 = mx.getCurrentThreadCpuTime();
			c.buildClassifier(data);
			long t1 = System.nanoTime(), c1 = mx.getCurrentThreadCpuTime();
			if (r >= 0) { wall[r] = (t1 - t0) / 1e6; cpu[r] = (c1 - c0) / 1e6; }
		}
		System.setOut(out);
		Arrays.sort(wall); Arrays.sort(cpu);
		System.out.printf("wall_ms=%.3f cpu_ms=%.3f%n", wall[repeats / 2], cpu[repeats / 2]);
	}
}
