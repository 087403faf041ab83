# thinlog.awk - a vit-train --log as results/ keeps it: every line of the
# first epoch, every validation line and every line without a step, and
# past the first epoch every 10th step (the cache keeps the whole log).
{
	step = match($0, /"step":[0-9]+/) ? substr($0, RSTART + 7, RLENGTH - 7) + 0 : -1
	epoch = match($0, /"epoch":[0-9.]+/) ? substr($0, RSTART + 8, RLENGTH - 8) + 0 : 0
	if (step < 0 || /"val_acc"/ || epoch <= 1 || step % 10 == 0)
		print
}
