set terminal svg size 900,1200 dynamic font "sans,11"
set output "/work/main/docs/plots/bpf.svg"
set multiplot layout 4,1
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set grid ytics
set key outside right top
set xtics nomirror
set datafile missing 'nan'
set termoption noenhanced
set title "dev path: null device (kernel: veth, live frames), ns per packet minus the floor"
set ylabel "ns"
plot "bpf.dat" index 0 using 2:xtic(1) title "uxdp-jit", "bpf.dat" index 0 using 3:xtic(1) title "uxdp-interp", "bpf.dat" index 0 using 4:xtic(1) title "native-c", "bpf.dat" index 0 using 5:xtic(1) title "kernel"
set title "run path: one buffer, ns per run minus the floor"
set ylabel "ns"
plot "bpf.dat" index 1 using 2:xtic(1) title "uxdp-jit", "bpf.dat" index 1 using 3:xtic(1) title "uxdp-interp", "bpf.dat" index 1 using 4:xtic(1) title "native-c", "bpf.dat" index 1 using 5:xtic(1) title "dpdk-jit", "bpf.dat" index 1 using 6:xtic(1) title "dpdk-interp"
set title "test runs (repeat): ns per run minus the floor"
set ylabel "ns"
plot "bpf.dat" index 2 using 2:xtic(1) title "uxdp-jit", "bpf.dat" index 2 using 3:xtic(1) title "uxdp-interp", "bpf.dat" index 2 using 4:xtic(1) title "kernel"
set title "instructions per run minus the floor's (callgrind)"
set ylabel "instr"
plot "bpf.dat" index 3 using 2:xtic(1) title "uxdp-jit", "bpf.dat" index 3 using 3:xtic(1) title "uxdp-interp", "bpf.dat" index 3 using 4:xtic(1) title "native-c"
unset multiplot
