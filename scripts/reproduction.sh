#!/bin/bash
# The reproduction study (docs/reproduction.md): the three papers' claims tested at a scale two CPU cores can run,
# Fashion-MNIST (full training set, eps 0.05, small CNN), GTSRB restricted to FRL's 17 classes (eps 12/255, FRL's
# small CNN) and CIFAR-10 at the CPU recipe (eps 8/255, WideResNet-16-1; named explicitly: its runs take over an hour
# each), every arm with several seeds, evaluated on the whole test set.
#   scripts/reproduction.sh pilot|study|autoattack [DATASET ...]        (default: fashion-mnist gtsrb32; cifar10
#                                                                        when named; its pilot: scripts/cifar10_pilot.sh)
#   scripts/reproduction.sh list pilot|study|autoattack [DATASET ...]   (print the jobs, run nothing)
# Environment: ARMS (the arms, below), SEEDS (each arm's protocol seeds unless given, below), OUT (runs/reproduction), RESULTS (results/reproduction), WORKERS (2), TRAIN (build/tools/train),
# AUDIT (build/tools/audit), AA_SEED (0: the seed the autoattack phase attacks), AA_RETRAIN (0; 1: the autoattack
# phase retrains a committed seed whose checkpoint this machine lacks, a fine-tune's hot start too, below), DEVICE (cpu; cuda runs the whole
# study on one GPU, below). Every CPU process runs under one convolution setting, oneDNN fp32 (docs/engine.md): about
# 1.45x the native path's speed on one thread and equal to it at float rounding; it is fixed here, not taken from the
# environment, so every arm and seed of the study ran the same code (job.json records it as cpu_convolutions). Each job is one `build/tools/train` (or `audit`) process with one CPU thread; WORKERS of
# them drain a queue. A finished job is never redone and an interrupted one resumes from its saved state (--resume),
# so the script can be stopped at any moment and started again. An FRL job waits for its PGD-AT hot start, a FAAL
# job for its TRADES model (retrained, and committed beside its record, when a lost machine took its checkpoint:
# regenerate_hot_start). When a
# job finishes, its small files (never checkpoints) are copied to RESULTS/<dataset>/<arm>/seed<k>/, the folder
# the page is generated from (scripts/reproduction_report.sh).
set -euo pipefail
source "$(dirname "$0")/lib/job_queue.sh"
phase=${1:?usage: scripts/reproduction.sh pilot|study|autoattack|list [DATASET ...]}
list_only=0
if [ "$phase" = list ]; then list_only=1; phase=${2:?usage: scripts/reproduction.sh list pilot|study|autoattack}; shift; fi
shift
datasets=${*:-fashion-mnist gtsrb32}
device=${DEVICE:-cpu}
aa_seed=${AA_SEED:-0}
aa_retrain=${AA_RETRAIN:-0}
case $device in
    cpu) convolutions="env CLASSWISE_CONV=onednn CLASSWISE_PRECISION=fp32" device_flag="" suffix="" ;;
    # On a GPU: TF32 off (the GPU then predicts as the CPU does, docs/gpu.md) and deterministic cuDNN algorithms, so a
    # rerun is bit-identical. Its results go to their own tree: paired comparisons stay on one device, and the page is
    # never a mix of the two.
    cuda) convolutions="env CLASSWISE_TF32=0 CLASSWISE_DETERMINISTIC=1" device_flag="--device cuda" suffix=-gpu ;;
    *) echo "scripts/reproduction.sh: DEVICE must be cpu or cuda, not '$device'" >&2; exit 2 ;;
esac
case $aa_seed in *[!0-9]*|'') echo "scripts/reproduction.sh: AA_SEED must be a seed number, not '$aa_seed'" >&2; exit 2 ;; esac
case $aa_retrain in 0|1) ;; *) echo "scripts/reproduction.sh: AA_RETRAIN must be 0 or 1, not '$aa_retrain'" >&2; exit 2 ;; esac
out=${OUT:-runs/reproduction$suffix}
results=${RESULTS:-results/reproduction$suffix}
# Several small-CNN runs share one GPU well; on the CPU each run has one of the two cores.
workers=${WORKERS:-$([ "$device" = cuda ] && echo 6 || echo 2)}
train=${TRAIN:-build/tools/train}
audit=${AUDIT:-build/tools/audit}

# The protocol, fixed by the pilot (docs/reproduction.md, "Protocol"): per dataset the data, the model's optimiser
# and schedule, the epochs, and the evaluation. Every run holds out the same validation split (the first 2% of each
# class), which picks best_robust and feeds FRL's constraints and CFA's FAWA; the final evaluation is the whole test
# set, clean and PGD-20 (alpha eps/4, one random start).
declare -A data optim frl_optim
# Fashion-MNIST at eps 0.05, not the project's default 0.1: at 0.1 PGD-AT gives up Shirt at every schedule the pilot
# probed (results/reproduction/pilot-probe/), leaving no room to lift the worst class (criterion a).
data[fashion-mnist]="--dataset fashion-mnist --eps 0.05 --epochs 5 --batch-size 128 --val-split fraction:0.02 --eval-n 0 --epoch-eval-n 2000 --eval-steps 20"
optim[fashion-mnist]="--optimizer sgd --lr 0.05 --schedule piecewise"
data[gtsrb32]="--dataset gtsrb32 --classes top:17 --eps 12/255 --epochs 5 --batch-size 128 --attack-steps 5 --val-split fraction:0.02 --eval-n 0 --epoch-eval-n 1000 --eval-steps 20"
optim[gtsrb32]="--optimizer adam --lr 0.001 --wd 0 --schedule piecewise"
# CIFAR-10: the CPU recipe (study/cifar10_cpu_recipe.h, chosen by scripts/cifar10_pilot.sh): WideResNet-16-1, PGD-2
# training, the one-cycle schedule to lr 0.2 over 9 epochs, the CFA/FAIR-TAT validation split (first 100 per class);
# per-epoch PGD-20 on that split and the first 500 test images.
data[cifar10]="--dataset cifar10 --eps 8/255 --epochs 9 --batch-size 128 --arch wrn16_1 --attack-steps 2 --val-split first:100 --eval-n 0 --epoch-eval-n 500 --eval-steps 20"
optim[cifar10]="--optimizer sgd --lr 0.2 --wd 5e-4 --schedule cyclic"
eps_of() { case $1 in fashion-mnist) echo 0.05 ;; gtsrb32|cifar10) echo "$(sed -E 's/.*--eps ([^ ]+).*/\1/' <<< "${data[$1]}")" ;; esac; }
epochs_of() { sed -E 's/.*--epochs ([0-9]+).*/\1/' <<< "${data[$1]}"; }
# FRL fine-tunes the PGD-AT model of the same seed (its hot start) with the reference code's SGD (momentum 0.9,
# wd 5e-4, constant rate) for 2 epochs.
frl_optim="--epochs 2 --optimizer sgd --lr 0.01 --wd 5e-4 --schedule constant"
# Beyond the three papers: FAAL (docs/protocols/faal.md) fine-tunes the TRADES model of the same seed for 2 epochs
# with its authors' SGD (lr 0.01, /10 after the first epoch).
faal_optim="--epochs 2 --optimizer sgd --lr 0.01 --wd 5e-4 --schedule multistep --milestones 1"

# ARMS replaces each dataset's list; on Fashion-MNIST and GTSRB-17 the rows beyond the three papers (dafa, trix, faal)
# run only when it names them, e.g. ARMS="pgd_at trades dafa trix faal" scripts/reproduction.sh study. CIFAR-10, the
# papers' dataset, runs the methods the newer papers compare on it: FRL and CFA on their published bases, FAIR-TAT,
# DAFA, TRIX and FAAL (fine-tuning TRADES).
arms_of() {  # dataset
    if [ -n "${ARMS:-}" ]; then echo $ARMS; return; fi
    case $1 in
        cifar10) echo "natural pgd_at trades frl_rwrm cfa_trades fair_tat dafa trix faal" ;;
        *) echo "natural pgd_at trades frl_rwrm frl_rw cfa_at cfa_at_ema cfa_trades fair_tat fair_tat_ema" ;;
    esac
}
# SEEDS replaces every named arm's seeds, to add seeds where the page says more would decide a claim, e.g.
# ARMS="cfa_at cfa_at_ema" SEEDS="3 4 5 6" scripts/reproduction.sh study fashion-mnist.
seeds=${SEEDS:-}
case $seeds in *[!0-9\ ]*) echo "scripts/reproduction.sh: SEEDS must be seed numbers separated by spaces, not '$seeds'" >&2; exit 2 ;; esac
seeds_of() {  # arm dataset
    if [ -n "${seeds// /}" ]; then echo $seeds; return; fi
    # Five seeds for the bases and the fair method given them before any run: FRL on Fashion-MNIST and GTSRB-17,
    # FAIR-TAT (the project's headline method) on CIFAR-10, where TRADES is also a base (CFA, DAFA, TRIX, FAAL).
    case $2:$1 in
        cifar10:pgd_at|cifar10:trades|cifar10:fair_tat) echo "0 1 2 3 4" ;;
        cifar10:*) echo "0 1 2" ;;
        *:pgd_at|*:frl_rwrm) echo "0 1 2 3 4" ;;
        *) echo "0 1 2" ;;
    esac
}

# The arm a fine-tune starts from (its hot start); nothing for an arm that trains from scratch.
hot_start_arm() { case $1 in frl_*) echo pgd_at ;; faal) echo trades ;; esac; }
hot_start_dir() { local h; h=$(hot_start_arm "$2"); [ -z "$h" ] || echo "$out/$1/$h/seed$3"; }  # dataset arm seed

warmup_of() { local w=$(( $(epochs_of "$1") * 70 / $2 )); echo $(( w < 1 ? 1 : w )); }  # dataset code's epochs
arm_flags() {  # arm dataset seed [hot start's folder: where a fine-tune starts, its seed's run folder unless given]
    local a=$1 ds=$2 s=$3 hot=${4:-$(hot_start_dir "$2" "$1" "$3")}
    case $a in
        natural)      echo "--method natural ${optim[$ds]}" ;;
        pgd_at)       echo "--method pgd_at ${optim[$ds]}" ;;
        trades)       echo "--method trades ${optim[$ds]}" ;;
        frl_rwrm|frl_rw) echo "--method $a --init $hot/last.safetensors $frl_optim" ;;
        # CFA's calibration and FAWA from the second epoch (the paper's epoch 10 and 50 are for 100-200 epochs).
        cfa_at)       echo "--method cfa_at --cfa-begin 1 --ema fawa --ema-start 1 ${optim[$ds]}" ;;
        # CFA's calibration with plain epoch EMA instead of FAWA: the pair that tests "FAWA beats EMA".
        cfa_at_ema)   echo "--method cfa_at --cfa-begin 1 --ema epoch --ema-start 1 ${optim[$ds]}" ;;
        cfa_trades)   echo "--method cfa_trades --cfa-begin 1 --ema fawa --ema-start 1 ${optim[$ds]}" ;;
        fair_tat)     echo "--method fair_tat ${optim[$ds]}" ;;
        fair_tat_ema) echo "--method fair_tat --ema epoch --ema-start 1 ${optim[$ds]}" ;;
        # Beyond the papers (docs/protocols/dafa.md, trix.md): each keeps its own code's warm-up fraction, DAFA
        # 70 of 110 epochs (3 of 5, 5 of 9), TRIX 70 of 150 (2 of 5, 4 of 9).
        dafa)         echo "--method dafa --dafa-warmup $(warmup_of "$ds" 110) ${optim[$ds]}" ;;
        trix)         echo "--method trix --dafa-warmup $(warmup_of "$ds" 150) ${optim[$ds]}" ;;
        faal)         echo "--method faal --init $hot/last.safetensors $faal_optim" ;;
    esac
}
checkpoints_of() { case $1 in cfa_*|fair_tat_ema) echo last,best_robust,ema_last ;; *) echo last,best_robust ;; esac; }
# An arm that trains another arm's weights: CFA-AT + EMA is CFA-AT's command but for the average it keeps beside the
# model, never trained on, so its last model is CFA-AT's (their last and best_robust evaluations agree on every seed);
# FAIR-TAT + EMA likewise is FAIR-TAT's (GTSRB-17 seed 2: the same last.safetensors, byte for byte, and the same
# AutoAttack record). The autoattack phase, which attacks the last model, attacks it once, as the other arm.
same_weights_as() { case $1 in cfa_at_ema) echo cfa_at ;; fair_tat_ema) echo fair_tat ;; esac; }

# The pilot: PGD-AT alone, 3 seeds, at the protocol's setting, to check its two criteria (worst class >= 10% PGD-20
# on average; the last two epochs within one point). Its runs are the study's PGD-AT seeds 0-2 (same folders), so
# the study never trains them twice.
jobs() {
    local ds a s
    for ds in $datasets; do
        case $phase in
            pilot) for s in 0 1 2; do echo "$ds pgd_at $s"; done ;;
            study) for a in $(arms_of "$ds"); do for s in $(seeds_of "$a" "$ds"); do echo "$ds $a $s"; done; done ;;
            autoattack) for a in $(arms_of "$ds"); do
                    local twin; twin=$(same_weights_as "$a")
                    if [ -n "$twin" ]; then echo "$ds $a: its last model is $twin's (same training); attacked as $twin" >&2; continue; fi
                    echo "$ds $a $aa_seed"
                done ;;
            *) echo "scripts/reproduction.sh: unknown phase '$phase' (pilot, study, autoattack)" >&2; exit 2 ;;
        esac
    done
}

train_command() {  # dataset arm seed dir [final checkpoints [hot start's folder]]
    local ds=$1 a=$2 s=$3 dir=$4 d checkpoints=${5:-$(checkpoints_of "$2")} hot=${6:-}
    # The fine-tunes bring their own epoch count (--epochs 2 in their flags); train takes --epochs once, so the
    # dataset's 5 is dropped for them. Every other arm's command is left as it was.
    d=${data[$ds]}
    case $a in frl_*|faal) d=$(sed -E 's/--epochs [0-9]+ //' <<< "$d") ;; esac
    echo "$convolutions $train $d $(arm_flags "$a" "$ds" "$s" "$hot") ${device_flag:+$device_flag }--seed $s --final-attacks pgd20 --final-checkpoints $checkpoints --out $dir"
}

collect() {  # the small files of a finished run, into the results tree
    local src=$1 dst=$2 f
    mkdir -p "$dst"
    for f in job.json selection.json history.csv train_log.csv command.txt cpu.txt hot_start.txt checkpoint.sha256; do [ -f "$src/$f" ] && cp "$src/$f" "$dst/"; done
    for f in "$src"/eval_*/results.json "$src"/autoattack/results.json; do
        [ -f "$f" ] || continue
        mkdir -p "$dst/$(basename "$(dirname "$f")")" && cp "$f" "$dst/$(basename "$(dirname "$f")")/"
    done
}

# A run is finished when every final checkpoint has its evaluation: eval_last alone is written before the others, so
# a run stopped during its best_robust evaluation has it and must still resume. A FAWA run that accepted no epoch (its
# worst validation class never reached the threshold) has no EMA model, so no ema_last to evaluate: its
# selection.json says so, and without that rule such a run (e.g. every GTSRB-17 CFA run) would train again on every
# machine that lost its run folder.
no_ema_model() { grep -q '"accepted": 0,' "$1/selection.json" 2>/dev/null; }
finished() {  # dir arm
    local c
    for c in $(checkpoints_of "$2" | tr ',' ' '); do
        [ "$c" = ema_last ] && [ -s "$1/eval_last/results.json" ] && no_ema_model "$1" && continue
        [ -s "$1/eval_$c/results.json" ] || return 1
    done
}

# Runs one resumable process with one thread, its output appended to `log`. Returns 2 when Ctrl-C or SIGTERM stopped
# it (exit 130 / 143, state saved: the worker stops too, rather than start the next job), 1 when it failed.
run_logged() {  # log command...
    local log=$1 rc=0
    shift
    CLASSWISE_THREADS=1 "$@" --resume >> "$log" 2>&1 || rc=$?
    if [ "$rc" = 130 ] || [ "$rc" = 143 ]; then echo "stopped (state saved): $*"; return 2; fi
    # A failed run says so in its folder, so that a fine-tune waiting for it (wait_for_hot_start) gives up.
    [ "$rc" = 0 ] || { echo "FAILED: $* (see $log)"; touch "$(dirname "$log")/FAILED"; return 1; }
}

# A hot start (PGD-AT for FRL, TRADES for FAAL) whose checkpoint was lost with a machine is needed again when a
# fine-tune of the same seed has not finished.
needed_as_hot_start() {  # dataset arm seed
    local f
    case $2 in pgd_at) f="frl_rwrm frl_rw" ;; trades) f=faal ;; *) return 1 ;; esac
    for f in $f; do
        case " $(arms_of "$1") " in *" $f "*) ;; *) continue ;; esac
        case " $(seeds_of "$f" "$1") " in *" $3 "*) ;; *) continue ;; esac
        finished "$results/$1/$f/seed$3" "$f" || return 0
    done
    return 1
}

# Retrains a hot start with its own command (single-threaded training repeats exactly on the same CPU, so the same
# seed gives the same model there), evaluating only its last checkpoint, and compares that evaluation with the
# committed one. Equal: the fine-tune starts from the model the committed record describes. Different (another CPU
# trained the record: oneDNN's kernels, and so the float rounding, follow the vector instructions): the retrained
# model is another model of the same seed. The committed run stays the arm's seed; the retrained one is committed
# beside it, as <seed>/hot_start/, and the fine-tunes of the seed are compared with it, the model they started from
# (reproduction_report). Run again on a finished retraining, it only compares and records.
regenerate_hot_start() {  # dataset arm seed
    local ds=$1 a=$2 s=$3 dir="$out/$1/$2/seed$3" dst="$results/$1/$2/seed$3" cmd
    mkdir -p "$dir"
    record_cpu "$dir"
    # A fine-tune waits while this marker stands (wait_for_hot_start): the checkpoint exists before the comparison
    # has said which record the fine-tune pairs with.
    touch "$dir/REGENERATING"
    if [ ! -s "$dir/eval_last/results.json" ]; then
        cmd=$(train_command "$ds" "$a" "$s" "$dir" last)
        echo "regenerating the hot start's checkpoint: $cmd" | tee "$dir/command.txt"
        run_logged "$dir/log.txt" $cmd || return
    fi
    rm -f "$dir/MISMATCH"  # the verdict of an earlier version of this script, which refused such a model
    if same_evaluation "$dir/eval_last/results.json" "$dst/eval_last/results.json"; then
        rm -f "$dir/RETRAINED"
        echo "regenerated $dir: its evaluation equals the committed one"
    else
        # The checkpoint's checksum names the model: a fine-tune records the one it started from (hot_start.txt), and
        # the page pairs it only with the record of that model.
        local sum old f users=""
        if [ ! -f "$dir/last.safetensors" ]; then
            regeneration_failed "$dir" "$dir has the retrained model's evaluation but not its checkpoint (last.safetensors); delete the folder to retrain it"
            return 1
        fi
        sum=$(sha256sum "$dir/last.safetensors" | cut -d' ' -f1)
        old=$(cat "$dst/hot_start/checkpoint.sha256" 2>/dev/null || true)
        for f in "$results/$ds"/*/"seed$s"/hot_start.txt; do
            grep -qs "^checkpoint sha256: $old\$" "$f" && users+="$(basename "$(dirname "$(dirname "$f")")") "
        done
        # Another machine's retraining is yet another model: a fine-tune that finished from the recorded one keeps its
        # record, and the seed's unfinished fine-tunes do not start (they would be compared with a model they did not
        # start from). Ways on: delete those fine-tunes' committed seed folders, so that every fine-tune of the seed
        # runs from the new model, or run the others where the recorded checkpoint still is.
        if [ -n "$old" ] && [ "$old" != "$sum" ] && [ -n "$users" ]; then
            regeneration_failed "$dir" "$a seed $s retrained here (checkpoint sha256 ${sum:0:12}) is not the model ${users}seed $s finished from (${old:0:12}, $ds/$a/seed$s/hot_start in the results): that record is kept and the seed's other fine-tunes do not start (delete the finished ones' committed folders to retrain them from this model)"
            return 1
        fi
        { echo "retrained hot start: $a seed $s, retrained on $(head -1 "$dir/cpu.txt"), evaluates differently from its committed record (trained on another CPU); its fine-tunes start from it and are compared with it ($ds/$a/seed$s/hot_start in the results)"
          echo "checkpoint sha256: $sum"; } | tee "$dir/RETRAINED"
        echo "$sum" > "$dir/checkpoint.sha256"
        rm -rf "$dst/hot_start"
        collect "$dir" "$dst/hot_start"
    fi
    rm -f "$dir/REGENERATING"
}

# A regeneration that cannot give its fine-tunes a model: says why, and marks the folder FAILED so that they stop
# waiting (wait_for_hot_start).
regeneration_failed() {  # run folder, why
    echo "FAILED: $2"
    touch "$1/FAILED"
    rm -f "$1/REGENERATING"
}

# Two results.json files record the same evaluation: equal but for the command line (its --final-checkpoints).
same_evaluation() { cmp -s <(grep -v '"command_line"' "$1") <(grep -v '"command_line"' "$2"); }

# oneDNN picks its fp32 kernels by the CPU's vector instructions, so two machines train the same seed equal only to
# float rounding: each run records the CPU that trained it (the study's machines changed between working periods).
record_cpu() {  # run folder
    [ -s "$1/cpu.txt" ] && return 0
    { sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1
      echo "vector instructions: $(grep -o -w -E 'avx2|avx512f|avx512_bf16|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' ')"
      [ "$device" = cpu ] || echo "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
    } > "$1/cpu.txt"
}

# A hot start is ready once its evaluation is written and no regeneration is under way.
hot_start_ready() { [ -s "$1/eval_last/results.json" ] && [ ! -e "$1/REGENERATING" ]; }

# Returns 1 when the hot start failed, 2 when the study was stopped meanwhile (a worker stopped by a signal), so a
# waiting worker never outlives the study.
wait_for_hot_start() {  # the hot start's run folder
    while ! hot_start_ready "$1"; do
        [ ! -e "$1/FAILED" ] || { echo "FAILED: its hot start failed: $1 (see $1/log.txt)"; return 1; }
        [ ! -e "$stopped" ] || return 2
        sleep 1
    done
    # A retraining that would replace the record of another fine-tune's model fails after its evaluation is written.
    [ ! -e "$1/FAILED" ] || { echo "FAILED: its hot start failed: $1 (see above)"; return 1; }
}

# The model AutoAttack attacks where the committed seed's checkpoint is gone: the seed retrained with its own command,
# last checkpoint only, into aa_model/ beside the run folder (never over it), evaluated as the study evaluates. A
# fine-tune (FRL, FAAL) starts from its hot start's checkpoint where this machine has one (the study phase leaves one
# where it trained or regenerated it); where not, from its hot start retrained the same way, into that arm's own
# aa_model/ (the study's hot-start records stay untouched), so the fine-tunes of a seed start from one model, as in
# the study, and an attack on the hot start's arm attacks that model too. The attack is compared with the attacked
# model's own evaluation, so these being other models of the seed than the committed ones does not matter.
retrain_for_autoattack() {  # dataset arm seed folder
    local ds=$1 a=$2 s=$3 model=$4 hot
    hot=$(hot_start_dir "$ds" "$a" "$s")
    if [ -n "$hot" ] && [ ! -s "$hot/last.safetensors" ]; then
        hot="$hot/aa_model"
        retrain_once "$ds" "$(hot_start_arm "$a")" "$s" "$hot" "" || return
    fi
    retrain_once "$ds" "$a" "$s" "$model" "$hot"
}

# Trains a model for the attack unless it is there; a second worker that needs the same one (the other fine-tune of
# the seed, or the hot start's own attack) waits on the folder's lock and then finds it trained. A training stopped
# by a signal marks the study stopped before it lets go of the lock, so the waiting worker stops instead of resuming it.
retrain_once() {  # dataset arm seed folder hot-start-folder ("" for none)
    local ds=$1 a=$2 s=$3 dir=$4 hot=$5
    mkdir -p "$dir"
    (
        flock 9
        [ ! -e "$stopped" ] || exit 2
        [ -s "$dir/eval_last/results.json" ] && [ -s "$dir/last.safetensors" ] && exit 0
        echo "retraining for AutoAttack: $a seed $s into $dir"
        rc=0
        train_into "$ds" "$a" "$s" "$dir" "$hot" last || rc=$?
        [ "$rc" != 2 ] || touch "$stopped"
        exit "$rc"
    ) 9> "$dir/.lock"
}

# One training job into its folder, with the record a run keeps: the CPU, the command, and for a fine-tune of a
# retrained hot start its hot_start.txt (the page pairs it with that model, not the committed one).
train_into() {  # dataset arm seed folder hot-start-folder ("" for none) [final checkpoints]
    local ds=$1 a=$2 s=$3 dir=$4 hot=$5
    mkdir -p "$dir"
    record_cpu "$dir"
    if [ -n "$hot" ] && [ -e "$hot/RETRAINED" ]; then cp "$hot/RETRAINED" "$dir/hot_start.txt"; else rm -f "$dir/hot_start.txt"; fi
    local cmd; cmd=$(train_command "$ds" "$a" "$s" "$dir" "${6:-}" "$hot")
    echo "$cmd" | tee "$dir/command.txt"
    run_logged "$dir/log.txt" $cmd
}

run_one() {
    local ds=$1 a=$2 s=$3 dir="$out/$1/$2/seed$3" dst="$results/$1/$2/seed$3"
    if [ "$phase" = autoattack ]; then
        # The standard AutoAttack cascade on the first 1,000 test images of one seed's last checkpoint (AA_SEED, 0
        # unless a machine lost that seed's checkpoints: the page names the seed each arm was attacked at).
        local aa="$dir/autoattack" model=$dir
        [ -s "$aa/results.json" ] && { echo "done already: $aa"; return 0; }
        [ -s "$dst/autoattack/results.json" ] && { echo "done already (committed): $dst/autoattack"; return 0; }
        # A machine that lost the seed's checkpoint retrains it with AA_RETRAIN=1 (its own command, into aa_model/,
        # never over the run folder), attacks that model and records it beside the attack: the page compares the
        # attack with that model's own PGD-20 evaluation, not with the committed run's (another CPU's rounding).
        if [ ! -s "$dir/last.safetensors" ] && [ "$aa_retrain" = 1 ] && finished "$dst" "$a"; then
            model="$dir/aa_model"
            retrain_for_autoattack "$ds" "$a" "$s" "$model" || return
        fi
        [ -s "$model/last.safetensors" ] || { echo "no checkpoint: $dir/last.safetensors (train seed $s here first, pick a seed this machine trained with AA_SEED, or retrain it with AA_RETRAIN=1)"; return 1; }
        [ ! -e "$model/RETRAINED" ] && [ ! -e "$model/MISMATCH" ] || { echo "FAILED: $model/last.safetensors is a retrained hot start, not the model its committed results describe"; return 1; }
        local cmd="$convolutions $audit --weights $model/last.safetensors --dataset $ds $(case $ds in gtsrb32) echo --classes top:17;; esac) --eps $(eps_of "$ds") --attacks clean,autoattack --n 1000 ${device_flag:+$device_flag }--out $aa"
        echo "$cmd"
        run_logged "$dir/autoattack.log" $cmd || return
        # Only the attack's record: the run's own files are the committed ones (a regenerated hot start has fewer). A
        # model retrained for the attack goes beside it, named by its checkpoint's checksum.
        mkdir -p "$dst/autoattack"
        if [ "$model" != "$dir" ]; then
            rm -rf "$dst/autoattack/model" && collect "$model" "$dst/autoattack/model"
            sha256sum "$model/last.safetensors" | cut -d' ' -f1 > "$dst/autoattack/model/checkpoint.sha256"
            # A fine-tune retrained from a retrained hot start: that model's record goes with it.
            local hot; hot=$(hot_start_dir "$ds" "$a" "$s")/aa_model
            if [ "$hot" != /aa_model ] && grep -qsF -- "--init $hot/last.safetensors " "$model/command.txt"; then
                collect "$hot" "$dst/autoattack/model/hot_start"
                sha256sum "$hot/last.safetensors" | cut -d' ' -f1 > "$dst/autoattack/model/hot_start/checkpoint.sha256"
            fi
        fi
        cp "$aa/results.json" "$dst/autoattack/"
        return 0
    fi
    if finished "$dir" "$a"; then collect "$dir" "$dst"; echo "done already: $dir"; return 0; fi
    # The committed results are the study's record: a run finished there is done, even when this machine has lost
    # its run folder. Only its checkpoint is gone, and only a fine-tune needs that (see regenerate_hot_start).
    if finished "$dst" "$a"; then
        if needed_as_hot_start "$ds" "$a" "$s"; then regenerate_hot_start "$ds" "$a" "$s"; return; fi
        echo "done already (committed): $dst"; return 0
    fi
    local hot; hot=$(hot_start_dir "$ds" "$a" "$s")
    # A hot start that is neither ready here nor among the arms this run trains would be waited for forever.
    if [ -n "$hot" ] && ! hot_start_ready "$hot" && [ ! -e "$hot/REGENERATING" ]; then
        case " $(arms_of "$ds") " in
            *" $(hot_start_arm "$a") "*) ;;
            *) echo "FAILED: $a seed $s fine-tunes $(hot_start_arm "$a") seed $s, which is not trained here ($hot) and not in ARMS: add $(hot_start_arm "$a") to ARMS"; return 1 ;;
        esac
    fi
    # While its hot start trains and other jobs are queued, a fine-tune goes back to the queue's end (3: requeue), so
    # that a worker does not sit idle behind it; with nothing else queued it waits.
    if [ -n "$hot" ] && ! hot_start_ready "$hot" && [ ! -e "$hot/FAILED" ] && [ -s "$queue" ]; then return 3; fi
    [ -z "$hot" ] || wait_for_hot_start "$hot" || return
    train_into "$ds" "$a" "$s" "$dir" "$hot" || return
    collect "$dir" "$dst"
}

if [ "$list_only" = 1 ]; then
    jobs | while read -r ds a s; do
        if [ "$phase" = autoattack ]; then echo "$ds $a seed$s autoattack"; else train_command "$ds" "$a" "$s" "$out/$ds/$a/seed$s"; fi
    done
    exit 0
fi

# The queue, seed by seed: every arm's seed 0 before any seed 1, so that a study stopped midway has whole paired
# seeds to compare; within a seed the hot starts first (PGD-AT and TRADES before their FRL and FAAL fine-tunes, which
# come last), so a fine-tune seldom waits, and one that would goes back to the queue's end (run_one).
mkdir -p "$out"
queue="$out/queue-$phase.txt"
stopped="$out/stopped-$phase"  # a worker was stopped by a signal: the others stop too
rm -f "$stopped"
find "$out" -name FAILED -delete  # a rerun tries every failed job again
jobs | awk '{print $3, ($2 ~ /^(pgd_at|trades)$/ ? 0 : $2 ~ /^(frl_|faal)/ ? 2 : 1), $0}' | sort -s -k1,1n -k2,2n | cut -d' ' -f3- > "$queue"
worker() {
    local job requeued=0
    while true; do
        [ ! -e "$stopped" ] || return 0
        job=$(queue_pop "$queue")
        [ -n "$job" ] || return 0
        local rc=0
        run_one $job || rc=$?
        # Stopped by a signal: a rerun rebuilds the queue and resumes this job.
        if [ "$rc" = 2 ]; then touch "$stopped"; return 0; fi
        if [ "$rc" != 3 ]; then requeued=0; continue; fi
        queue_push "$queue" "$job"
        # Once every queued job has gone round waiting, wait a second before the next round.
        requeued=$((requeued + 1))
        if [ "$requeued" -ge "$(wc -l < "$queue")" ]; then requeued=0; sleep 1; fi
    done
}
for w in $(seq "$workers"); do worker & done
wait
