#!/usr/bin/env bash
# Build the authors' EBNC code (github nayyarzaidi/EBNC, classifier EBNC.wdBayes) with the EBNCTime driver,
# for `benchmarks/bench_ebnc.py --java`.
#
#   EBNC_GIT=<git dir of github nayyarzaidi/EBNC> ALR_BUILD=<anchors/alr/build.sh's build dir> \
#       bash benchmarks/ebnc_driver/build.sh [BUILD_DIR]
#   source BUILD_DIR/env.sh        # sets EBNC_JAVA
#
# Weka 3.9's weka.jar and the native L-BFGS-B (liblbfgsb_wrapper.so) are taken from the ALR build
# (anchors/alr/build.sh: the EBNC repo's own lib/weka.jar has no blob in the mirror, like ALR's); the other
# jars from the EBNC repo's lib/. No source change is needed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD="${1:-$HERE/build}"
EBNC_GIT="${EBNC_GIT:?set EBNC_GIT to the git dir of a fetched github nayyarzaidi/EBNC}"
ALR_BUILD="${ALR_BUILD:?set ALR_BUILD to the build dir of anchors/alr/build.sh}"
rm -rf "$BUILD"; mkdir -p "$BUILD"/{lib,classes}
git --git-dir="$EBNC_GIT" rev-parse HEAD > "$BUILD/EBNC_COMMIT"
git --git-dir="$EBNC_GIT" archive HEAD src 2>/dev/null | tar -x -C "$BUILD"
for j in commons-math3-3.6.1.jar google-collections-1.0.jar jayes.jar jgrapht-jdk1.6.jar jniwrapper.jar; do
  git --git-dir="$EBNC_GIT" show "HEAD:lib/$j" > "$BUILD/lib/$j"
done
cp "$ALR_BUILD/lib/weka.jar" "$BUILD/lib/"
CP="$BUILD/classes:$(ls "$BUILD"/lib/*.jar | tr '\n' ':')"
find "$BUILD/src" -name '*.java' > "$BUILD/sources.txt"
echo "$HERE/EBNCTime.java" >> "$BUILD/sources.txt"
javac -nowarn -encoding UTF-8 -d "$BUILD/classes" -cp "$CP" @"$BUILD/sources.txt" 2>&1 | grep -v '^Note:' || true
[ -f "$BUILD/classes/EBNC/wdBayes.class" ] && [ -f "$BUILD/classes/EBNCTime.class" ]
cat > "$BUILD/env.sh" <<ENV
# source me; -XX:ActiveProcessorCount=1: the JVM sized for one core (the fit is single-threaded, -M off)
export EBNC_JAVA="java -Xmx4g -XX:ActiveProcessorCount=1 --add-opens java.base/java.lang=ALL-UNNAMED -Djava.library.path=$ALR_BUILD/native -cp $CP"
ENV
echo "[build] OK -> $BUILD (source $BUILD/env.sh)"
